package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

// TestNameTypes: the column types of an event's JSON are rewritten into
// their SQL names, nested types whole, and nothing else is touched: not text
// that only looks like a type inside a string.
func TestNameTypes(t *testing.T) {
	schema := domain.NewSchema(
		domain.Field{Name: "id", Type: domain.TypeInt64},
		domain.Field{Name: "tags", Type: domain.ListOf(domain.TypeString), Nullable: true},
		domain.Field{Name: "attrs", Type: domain.MapOf(domain.TypeString, domain.ListOf(domain.TypeDate)), Nullable: true},
		domain.Field{Name: "info", Type: domain.StructOf(domain.Field{Name: "type", Type: domain.TypeFloat64, Nullable: true},
			domain.Field{Name: "at", Type: domain.TypeTimestamp}), Nullable: true, Comment: `"type":{"kind":2}`},
		domain.Field{Name: "wait", Type: domain.Type{Kind: domain.KindDayTimeInterval}, Nullable: true},
	)
	ev := &domain.Event{Type: domain.EventBatchCommitted, Message: `a message saying "type":{"kind":2}`,
		Details: domain.Details{BatchCommitted: &domain.BatchInfo{Flow: "f", Target: "t", Schema: &schema}}}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	got := domain.NameTypes(raw)
	var back struct {
		Message string
		Details struct {
			BatchCommitted struct {
				Schema struct {
					Fields []struct {
						Name    string
						Type    string
						Comment string
					}
				}
			} `json:"batch_committed"`
		}
	}
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	fields := back.Details.BatchCommitted.Schema.Fields
	for i, want := range []string{"bigint", "array<string>", "map<string, array<date>>", "struct<type: double, at: timestamp>", "interval day to second"} {
		if i >= len(fields) || fields[i].Type != want {
			t.Errorf("field %d: %+v, want type %q\n%s", i, fields, want, got)
		}
	}
	if back.Message != ev.Message || fields[3].Comment != `"type":{"kind":2}` {
		t.Errorf("text inside strings changed: %q, %q", back.Message, fields[3].Comment)
	}
	if strings.Contains(string(got), `"kind"`) {
		t.Errorf("a type is left as a number:\n%s", got)
	}
	// JSON without types comes out as it went in.
	for _, s := range []string{`{}`, `{"type":"x"}`, `{"type":{"name":1}}`, `{"a":"\"type\":{\"kind\":2}"}`} {
		if out := string(domain.NameTypes([]byte(s))); out != s {
			t.Errorf("NameTypes(%s) = %s", s, out)
		}
	}
}
