package syntax

import (
	"errors"
	"strings"
	"testing"
)

// TestPrecedence shows how expressions nest: {...} marks every operator node.
func TestPrecedence(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a OR b AND c", "{a OR {b AND c}}"},
		{"a AND b OR c", "{{a AND b} OR c}"},
		{"NOT a AND b", "{{NOT a} AND b}"},
		{"NOT a = b", "{NOT {a = b}}"},
		{"a = b AND c = d", "{{a = b} AND {c = d}}"},
		{"a + b * c", "{a + {b * c}}"},
		{"a * b + c", "{{a * b} + c}"},
		{"a - b - c", "{{a - b} - c}"},
		{"a || b + c", "{{a || b} + c}"},
		{"a + b = c * d", "{{a + b} = {c * d}}"},
		{"a & b | c ^ d", "{{a & b} | {c ^ d}}"},
		{"a | b = c", "{{a | b} = c}"},
		{"-a * b", "{{-a} * b}"},
		{"-a::int", "{-CAST(a AS INT)}"},
		{"a = b IS NULL", "{{a = b} IS NULL}"},
		{"a IS NULL AND b", "{{a IS NULL} AND b}"},
		{"a BETWEEN 1 AND 2 AND b", "{{a BETWEEN 1 AND 2} AND b}"},
		{"a BETWEEN b + 1 AND c * 2", "{a BETWEEN {b + 1} AND {c * 2}}"},
		{"a NOT IN (1, 2) OR b", "{{a NOT IN (1, 2)} OR b}"},
		{"a LIKE 'x' ESCAPE '!' AND b", "{{a LIKE 'x' ESCAPE '!'} AND b}"},
		{"a + b LIKE c || d", "{{a + b} LIKE {c || d}}"},
		{"(a OR b) AND c", "{({a OR b}) AND c}"},
		{"x:a.b[0]", "{x:a.b[0]}"},
		{"arr[0].f", "{{arr[0]}.f}"},
		{"a.b.c", "a.b.c"},
		{"a DIV b * c", "{{a DIV b} * c}"},
		{"a + b << c & d", "{{{a + b} << c} & d}"},
		{"a >> b >>> c", "{{a >> b} >>> c}"},
		{"a << b < c", "{{a << b} < c}"},
		{"a > > b", "PARSE_SYNTAX_ERROR"},
		{"NOT NOT a", "{NOT {NOT a}}"},
		{"a <=> b == c", "{{a <=> b} == c}"},
		{"CASE WHEN a THEN b END = c", "{CASE WHEN a THEN b END = c}"},
		{"f(x) OVER (PARTITION BY a) + 1", "{f(x) OVER (PARTITION BY a) + 1}"},
		{"x -> x + 1", "x -> {x + 1}"},
	}
	for _, c := range cases {
		e, err := ParseExpr("expr", c.in)
		if err != nil {
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v", c.in, err)
			}
			continue
		}
		if got := explicitString(e); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParseExprErrors(t *testing.T) {
	for _, in := range []string{"", "a +", "a b", "(a", "CASE END", "CAST(a AS)", "a IS 3", "x:", "a NOT b"} {
		_, err := ParseExpr("expr", in)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: want a *Error, got %v", in, err)
			continue
		}
		if e.Pos.Line != 1 || e.Pos.Col < 1 || e.Pos.Col > len(in)+1 {
			t.Errorf("%q: position %v outside the input", in, e.Pos)
		}
	}
}

// TestPositions checks positions of nodes inside statements, through
// substitution and notebook cells.
func TestPositions(t *testing.T) {
	src := "-- Databricks notebook source\n" +
		"-- MAGIC %md\n" +
		"-- MAGIC ${x} is not substituted here\n" +
		"\n" +
		"-- COMMAND ----------\n" +
		"\n" +
		"SELECT ${long}, b\n" +
		"  FROM ${tbl} AS t\n" +
		"\n" +
		"-- COMMAND ----------\n" +
		"SELECT\tc FROM u\n"
	f, err := ParseFile("nb.sql", src, map[string]string{"long": "'a value much longer than the key'", "tbl": "main.s.t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Statements) != 2 {
		t.Fatalf("%d statements", len(f.Statements))
	}
	s1 := f.Statements[0].(*QueryStmt).Query.Body.(*Select)
	s2 := f.Statements[1].(*QueryStmt).Query.Body.(*Select)
	check := func(what string, got, want Pos) {
		t.Helper()
		if got != want {
			t.Errorf("%s at %v, want %v", what, got, want)
		}
	}
	check("statement 1", f.Statements[0].Position(), Pos{"nb.sql", 7, 1})
	check("substituted literal", s1.Items[0].Expr.Position(), Pos{"nb.sql", 7, 8})
	check("b after the substitution", s1.Items[1].Expr.Position(), Pos{"nb.sql", 7, 17})
	check("substituted table", s1.From[0].(*TableRef).Name.Pos, Pos{"nb.sql", 8, 8})
	check("alias after it", s1.From[0].(*TableRef).Alias.Pos, Pos{"nb.sql", 8, 15})
	check("statement 2", f.Statements[1].Position(), Pos{"nb.sql", 11, 1})
	check("column after a tab", s2.Items[0].Expr.Position(), Pos{"nb.sql", 11, 8})
	if len(f.Notes) != 1 || f.Notes[0].Pos != (Pos{"nb.sql", 2, 1}) {
		t.Errorf("notes %v", f.Notes)
	}
}

func TestClausePositions(t *testing.T) {
	f, err := ParseFile("c.sql", "SELECT a\nFROM t\nWHERE x\nGROUP BY a\nHAVING y\nQUALIFY z\nWINDOW w AS ()\nORDER BY a\nLIMIT 1\nOFFSET 2", nil)
	if err != nil {
		t.Fatal(err)
	}
	q := f.Statements[0].(*QueryStmt).Query
	s := q.Body.(*Select)
	got := []Pos{s.FromPos, s.WherePos, s.GroupBy.Pos, s.HavingPos, s.QualifyPos, s.WindowPos, q.OrderByPos, q.LimitPos, q.OffsetPos}
	for i, p := range got {
		if p != (Pos{"c.sql", i + 2, 1}) {
			t.Errorf("clause %d at %v, want line %d", i, p, i+2)
		}
	}
}

// TestDeepNesting: rendering is linear in depth (nested unary minus once
// took exponential time).
func TestDeepNesting(t *testing.T) {
	for _, src := range []string{
		strings.Repeat("- ", 200) + "a",
		strings.Repeat("NOT ", 200) + "a",
		strings.Repeat("(", 200) + "a" + strings.Repeat(")", 200),
		strings.Repeat("f(", 200) + "a" + strings.Repeat(")", 200),
	} {
		e, err := ParseExpr("deep", src)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseExpr("again", e.String())
		if err != nil || again.String() != e.String() {
			t.Fatalf("round trip of %.20s...: %v", src, err)
		}
	}
}
