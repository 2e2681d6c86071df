package expectations

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

func batch(t *testing.T, amounts ...domain.Value) *domain.Batch {
	t.Helper()
	b := domain.NewBatch(domain.NewSchema(
		domain.Field{Name: "id", Type: domain.TypeInt64, Nullable: true},
		domain.Field{Name: "amount", Type: domain.TypeFloat64, Nullable: true}), len(amounts))
	for i, a := range amounts {
		if err := b.AppendRow(domain.Int(int64(i)), a); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestCheck(t *testing.T) {
	rows := []domain.Value{domain.Float(5), domain.Float(-1), domain.Null(), domain.Float(0)}
	cases := []struct {
		name    string
		exps    []domain.Expectation
		kept    int
		dropped int64
		counts  string // passed/failed per expectation
		code    domain.Code
	}{
		{"warn keeps every row", []domain.Expectation{{Name: "pos", Condition: "amount > 0", Action: domain.ExpectWarn}}, 4, 0, "[pos:2/2]", ""},
		{"a NULL result passes", []domain.Expectation{{Name: "pos", Condition: "amount > 0", Action: domain.ExpectDrop}}, 2, 2, "[pos:2/2]", ""},
		{"drop rules combine", []domain.Expectation{
			{Name: "pos", Condition: "amount >= 0", Action: domain.ExpectDrop},
			{Name: "set", Condition: "amount IS NOT NULL", Action: domain.ExpectDrop}}, 2, 2, "[pos:3/1 set:3/1]", ""},
		{"fail names the row", []domain.Expectation{{Name: "pos", Condition: "amount >= 0", Action: domain.ExpectFail}}, 0, 0, "", domain.CodeExpectationViolation},
		{"an unknown column", []domain.Expectation{{Name: "x", Condition: "amout > 0"}}, 0, 0, "", domain.CodeUnresolvedColumn},
		{"not a condition", []domain.Expectation{{Name: "x", Condition: "amount + 1"}}, 0, 0, "", domain.CodeDatatypeMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New("orders", tc.exps)
			if err != nil {
				t.Fatal(err)
			}
			kept, dq, err := c.Check(batch(t, rows...))
			if tc.code != "" {
				if domain.CodeOf(err) != tc.code {
					t.Fatalf("error %v, want %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var counts []string
			for _, e := range dq.Expectations {
				counts = append(counts, fmt.Sprintf("%s:%d/%d", e.Name, e.PassedRecords, e.FailedRecords))
			}
			if kept.Len() != tc.kept || dq.DroppedRecords != tc.dropped || fmt.Sprint(counts) != tc.counts {
				t.Errorf("kept %d, dropped %d, counts %v; want %d, %d, %s", kept.Len(), dq.DroppedRecords, counts, tc.kept, tc.dropped, tc.counts)
			}
		})
	}
}

func TestParseError(t *testing.T) {
	if _, err := New("orders", []domain.Expectation{{Name: "x", Condition: "amount >"}}); domain.CodeOf(err) != domain.CodeParseSyntax {
		t.Fatalf("error %v, want PARSE_SYNTAX_ERROR", err)
	}
}

// TestCompiledOnce: the loader's Problems compiles the conditions for the
// schema it knows; Check of batches of that schema, from flows running at
// once, compiles nothing again. Problems reports every bad condition.
func TestCompiledOnce(t *testing.T) {
	schema := domain.NewSchema(domain.Field{Name: "amount", Type: domain.TypeInt64, Nullable: true})
	c, err := New("orders", []domain.Expectation{{Name: "positive", Condition: "amount > 0", Action: domain.ExpectDrop}})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Problems(schema); len(p) != 0 {
		t.Fatalf("problems %v", p)
	}
	compiled := c.compiled[schema.String()]
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := domain.NewBatch(schema, 2)
			_ = b.AppendRow(domain.Int(-1))
			_ = b.AppendRow(domain.Int(2))
			kept, _, err := c.Check(b)
			if err != nil || kept.Len() != 1 {
				t.Errorf("kept %v, err %v", kept, err)
			}
		}()
	}
	wg.Wait()
	if len(c.compiled) != 1 || &c.compiled[schema.String()][0] != &compiled[0] {
		t.Fatalf("compiled again: %d schemas", len(c.compiled))
	}

	bad, _ := New("orders", []domain.Expectation{{Name: "a", Condition: "nope > 0"}, {Name: "b", Condition: "amount + 1"}, {Name: "c", Condition: "amount > 1"}})
	var got []string
	for _, p := range bad.Problems(schema) {
		got = append(got, p.Expectation.Name+":"+string(domain.CodeOf(p.Err)))
	}
	if fmt.Sprint(got) != "[a:UNRESOLVED_COLUMN b:DATATYPE_MISMATCH]" {
		t.Fatalf("problems %v", got)
	}
}
