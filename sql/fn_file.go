package sql

import (
	"os/user"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"input_file_name": {minArgs: 0, maxArgs: 0, compile: compileInputFileName},
		"current_user":    {minArgs: 0, maxArgs: 0, compile: compileCurrentUser},
		"user":            {minArgs: 0, maxArgs: 0, compile: compileCurrentUser},
		"session_user":    {minArgs: 0, maxArgs: 0, compile: compileCurrentUser},
	})
}

// compileInputFileName: input_file_name() is the path of the file a row was
// read from: _metadata.file_path of a file read in the query, or an empty
// string where there is none (as Spark returns).
func compileInputFileName(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	ref := &syntax.ColumnRef{Pos: e.Pos, Parts: []*syntax.Ident{{Pos: e.Pos, Name: "_metadata"}, {Pos: e.Pos, Name: "file_path"}}}
	if n, err := c.compileNode(ref); err == nil && n.typ().Kind == domain.KindString { // a probe: its error is no problem
		return n, nil
	}
	return &litNode{t: domain.TypeString, v: domain.String("")}, nil
}

// compileCurrentUser: current_user() is the name of the user the pipeline
// runs as (the process's user).
func compileCurrentUser(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	who := ""
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	return &litNode{t: domain.TypeString, v: domain.String(who)}, nil
}
