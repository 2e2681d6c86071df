package syntax

import (
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/parse/*.sql")
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"", ";", "SELECT", "'", "`", "/*", "${a}", "x:a[0]::int", "-- Databricks notebook source\n-- COMMAND ----------\n"} {
		f.Add(s)
	}
}

var fuzzConf = map[string]string{"a": "x", "b.c": "y\nz", "q": "'", "e": ""}

// FuzzLexer: the lexer never panics, every token and every error lies within
// the input.
func FuzzLexer(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		s := newSource("fuzz.sql", src)
		text, err := s.substitute(src, fuzzConf)
		if err != nil {
			checkErrPos(t, src, err)
			return
		}
		toks, err := s.lex(text, nil)
		if err != nil {
			checkErrPos(t, src, err)
			return
		}
		for _, tk := range toks {
			checkErrPos(t, src, &Error{Pos: tk.pos})
		}
	})
}

// FuzzParse: the parser never panics; every error lies within the input; a
// file that parses renders to text that parses to the same rendering.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src string) {
		file, err := ParseFile("fuzz.sql", src, fuzzConf)
		if err != nil {
			checkErrPos(t, src, err)
			return
		}
		checkRoundTrip(t, "fuzz", file)
	})
}
