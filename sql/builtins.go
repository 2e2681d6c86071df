package sql

import (
	"github.com/sluicehq/sluice/sql/syntax"
	"sort"
	"strconv"
)

// builtin is one scalar function Compile knows: how many arguments it takes
// and how to compile a call of it. Each file of functions registers its own
// from an init function, so the set of functions is the sum of those files.
type builtin struct {
	minArgs, maxArgs int // maxArgs < 0: any number
	// lambdas: the function takes lambda arguments (x -> ...) and compiles
	// them itself; for the others a lambda, a named argument or a star is a
	// type mismatch reported before compile is called.
	lambdas bool
	// compile compiles a call whose argument count is already checked; name
	// is the lower-case name it was called by.
	compile func(c *compiler, e *syntax.FuncCall, name string) (node, error)
}

func (b builtin) arity() string {
	switch {
	case b.maxArgs < 0:
		return "at least " + strconv.Itoa(b.minArgs)
	case b.minArgs == b.maxArgs:
		return strconv.Itoa(b.minArgs)
	case b.maxArgs == b.minArgs+1:
		return strconv.Itoa(b.minArgs) + " or " + strconv.Itoa(b.maxArgs)
	}
	return strconv.Itoa(b.minArgs) + " to " + strconv.Itoa(b.maxArgs)
}

// builtins maps lower-case function names to their definitions.
var builtins = map[string]builtin{}

// register adds functions to builtins; a name registered twice is a bug in
// this package, found at start-up.
func register(fs map[string]builtin) {
	for name, f := range fs {
		if _, dup := builtins[name]; dup {
			panic("sql: function " + name + " registered twice")
		}
		builtins[name] = f
	}
}

// builtinNames lists the registered functions, for "did you mean".
func builtinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
