package expectations

import (
	"fmt"
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

func TestAdd(t *testing.T) {
	total := &domain.DataQuality{}
	for i := 0; i < 3; i++ {
		Add(total, &domain.DataQuality{DroppedRecords: 1, Expectations: []domain.ExpectationResult{{Name: "a", Dataset: "t", PassedRecords: 2, FailedRecords: 1}}})
	}
	if total.DroppedRecords != 3 || len(total.Expectations) != 1 || total.Expectations[0].PassedRecords != 6 || total.Expectations[0].FailedRecords != 3 {
		t.Fatalf("total %+v", total)
	}
}
