package sql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// genOne runs a generator over the fuzz batch (the test row, a row of
// NULLs, a row of zeros) and renders its schema and rows as
// "schema | row; row" with the input row of each.
func genOne(t *testing.T, src string) (string, error) {
	t.Helper()
	e, err := syntax.ParseExpr("test", src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	call, ok := e.(*syntax.FuncCall)
	if !ok {
		t.Fatalf("%s is not a call", src)
	}
	g, err := CompileGenerator(call, testSchema)
	if err != nil {
		return "", err
	}
	out, from, err := g.Eval(fuzzBatch(t))
	if err != nil {
		return "", err
	}
	if !out.Schema.Equal(g.Schema()) || len(from) != out.Len() {
		t.Fatalf("%s: schema %s for %s, %d rows for %d origins", src, out.Schema, g.Schema(), out.Len(), len(from))
	}
	var rows []string
	for i, r := range out.Rows() {
		rows = append(rows, fmt.Sprintf("%d:%v", from[i], r))
	}
	return g.Schema().String() + " | " + strings.Join(rows, "; "), nil
}

func TestGenerators(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"explode(array(10, 20))", "col int | 0:[10]; 0:[20]; 1:[10]; 1:[20]; 2:[10]; 2:[20]"},
		{"explode(array(i, n))", "col bigint | 0:[5]; 0:[NULL]; 1:[NULL]; 1:[NULL]; 2:[0]; 2:[-1]"},
		{"explode(map('a', i))", "key string, value bigint | 0:[a 5]; 1:[a NULL]; 2:[a 0]"},
		{"posexplode(array(10, 20))", "pos bigint, col int | 0:[0 10]; 0:[1 20]; 1:[0 10]; 1:[1 20]; 2:[0 10]; 2:[1 20]"},
		{"posexplode(map('a', 1))", "pos bigint, key string, value int | 0:[0 a 1]; 1:[0 a 1]; 2:[0 a 1]"},
		{"explode(if(n IS NULL, NULL, array(n)))", "col bigint | 2:[-1]"},
		{"explode_outer(if(n IS NULL, NULL, array(n)))", "col bigint | 0:[NULL]; 1:[NULL]; 2:[-1]"},
		{"posexplode_outer(if(n IS NULL, array(), array(n)))", "pos bigint, col bigint | 0:[NULL NULL]; 1:[NULL NULL]; 2:[0 -1]"},
		{"explode(NULL)", "col null | "},
		{"inline(array(struct(1, 'a'), struct(2, 'b')))", "col1 int, col2 string | 0:[1 a]; 0:[2 b]; 1:[1 a]; 1:[2 b]; 2:[1 a]; 2:[2 b]"},
		{"inline(array(st))", "x bigint, y string | 0:[7 why]; 1:[NULL NULL]; 2:[NULL NULL]"},
		{"inline_outer(if(n IS NULL, NULL, array(st)))", "x bigint, y string | 0:[NULL NULL]; 1:[NULL NULL]; 2:[NULL NULL]"},
		{"stack(2, 1, 2, 3)", "col0 int, col1 int | 0:[1 2]; 0:[3 NULL]; 1:[1 2]; 1:[3 NULL]; 2:[1 2]; 2:[3 NULL]"},
		{"stack(1, i, 2.5)", "col0 bigint, col1 decimal(2,1) | 0:[5 2.5]; 1:[NULL 2.5]; 2:[0 2.5]"},
		{`json_tuple('{"a":1, "b":"x", "c":{"d":[1]}}', 'a', 'b', 'c', 'z')`, `c0 string, c1 string, c2 string, c3 string | 0:[1 x {"d":[1]} NULL]; 1:[1 x {"d":[1]} NULL]; 2:[1 x {"d":[1]} NULL]`},
		{`json_tuple(ns, 'a')`, "c0 string | 0:[NULL]; 1:[NULL]; 2:[NULL]"},
		{"explode(s)", "DATATYPE_MISMATCH"},
		{"inline(array(1))", "DATATYPE_MISMATCH"},
		{"stack(i, 1)", "DATATYPE_MISMATCH"},
		{"stack(1, 1, true)", "col0 int, col1 boolean | 0:[1 true]; 1:[1 true]; 2:[1 true]"},
		{"explode(array(1), 2)", "WRONG_NUM_ARGS"},
		{"upper(s)", "NOT_IMPLEMENTED"},
		{"explode(x -> x)", "DATATYPE_MISMATCH"},
	} {
		got, err := genOne(t, tc.src)
		if err != nil {
			got = string(domain.CodeOf(err))
		}
		if got != tc.want {
			t.Errorf("%s = %s, want %s (%v)", tc.src, got, tc.want, err)
		}
	}
}

// TestGeneratorInScalarPosition: Compile refuses a generator inside an
// expression.
func TestGeneratorInScalarPosition(t *testing.T) {
	for _, src := range []string{"explode(array(1))", "1 + size(explode(array(1)))", "json_tuple(s, 'a')", "stack(1, 2)"} {
		if _, err := evalOne(t, src); domain.CodeOf(err) != domain.CodeUnsupportedGenerator {
			t.Errorf("%s: %v, want %s", src, err, domain.CodeUnsupportedGenerator)
		}
	}
}

func TestGeneratorSchemaDrift(t *testing.T) {
	e, _ := syntax.ParseExpr("t", "explode(array(i))")
	g, err := CompileGenerator(e.(*syntax.FuncCall), testSchema)
	if err != nil {
		t.Fatal(err)
	}
	other := domain.NewBatch(domain.NewSchema(domain.Field{Name: "i", Type: domain.TypeString}), 0)
	for _, b := range []*domain.Batch{nil, other} {
		if _, _, err := g.Eval(b); domain.CodeOf(err) != domain.CodeSchemaDrift {
			t.Errorf("eval on a batch of another schema: %v", err)
		}
	}
	if _, err := CompileGenerator(nil, testSchema); domain.CodeOf(err) != domain.CodeNotImplemented {
		t.Errorf("CompileGenerator(nil): %v", err)
	}
}
