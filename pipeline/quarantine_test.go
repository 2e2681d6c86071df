package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/processors"
	"github.com/sluicehq/sluice/sources"
)

// TestQuarantineRoundTrip: the rows a drop rule fails land in the
// quarantine with the rules they failed and where they came from; once the
// rule is fixed, a retry moves those that pass into the table and leaves
// the rest, their retries counted; a second retry moves nothing twice.
func TestQuarantineRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rows := `{"id": 1, "amount": 10}
{"id": 2, "amount": -5}
{"id": 3, "amount": 0}
{"id": 4, "amount": -50}
{"id": null, "amount": 7}
`
	if err := os.WriteFile(filepath.Join(dir, "orders.json"), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	declare := func(rule string) *Pipeline {
		p := New("quarantine")
		p.CreateStreamingTable("orders", Quarantine(), ExpectAllOrDrop(map[string]string{"positive": rule, "has_id": "id IS NOT NULL"}))
		p.AppendFlow("orders", StreamFrom(sources.Files(dir, sources.FileOptions{Format: "json"})), Name("load"))
		return p
	}
	h := newHarness(t)
	h.mustComplete(declare("amount > 0"), processors.Options{})
	if got := h.table("orders"); !slices.Equal(got, []int64{1}) {
		t.Fatalf("orders holds %v, want [1]", got)
	}
	q := h.quarantine("orders_quarantine")
	if want := []string{"-1 has_id load 0 0", "2 positive load 0 0", "3 positive load 0 0", "4 positive load 0 0"}; !slices.Equal(q, want) {
		t.Fatalf("orders_quarantine holds %v, want %v", q, want)
	}

	// the rule fixed: a refund of up to 10 is fine
	fixed := declare("amount > -10")
	res, err := fixed.RetryQuarantine(context.Background(), h.store, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved != 2 || res.Kept != 2 {
		t.Fatalf("retry moved %d and kept %d, want 2 and 2", res.Moved, res.Kept)
	}
	if got := h.table("orders"); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("orders holds %v after the retry, want [1 2 3]", got)
	}
	if q, want := h.quarantine("orders_quarantine"), []string{"-1 has_id load 0 1", "4 positive load 0 1"}; !slices.Equal(q, want) {
		t.Fatalf("orders_quarantine holds %v after the retry, want %v", q, want)
	}
	if res, err = fixed.RetryQuarantine(context.Background(), h.store, "orders"); err != nil || res.Moved != 0 || res.Kept != 2 {
		t.Fatalf("a second retry: %+v, %v", res, err)
	}
	if got := h.table("orders"); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("orders holds %v after the second retry", got)
	}
	if q := h.quarantine("orders_quarantine"); len(q) != 2 || q[0] != "-1 has_id load 0 2" {
		t.Fatalf("the second retry is not counted: %v", q)
	}
	// the next update goes on where it was; the log replays to the same state
	h.mustComplete(fixed, processors.Options{})
	if err := h.store.VerifyProjections(context.Background()); err != nil {
		t.Fatal(err)
	}
	// a full refresh of the table starts its quarantine afresh with it
	h.mustComplete(declare("amount > 0"), processors.Options{FullRefresh: []string{"orders"}})
	if got, q := h.table("orders"), h.quarantine("orders_quarantine"); !slices.Equal(got, []int64{1}) || len(q) != 4 {
		t.Fatalf("after a full refresh orders holds %v and the quarantine %v, want [1] and the 4 rows once", got, q)
	}
	if _, err := declare("amount > 0").RetryQuarantine(context.Background(), h.store, "nope"); domain.CodeOf(err) != domain.CodeInvalidDefinition {
		t.Errorf("retrying a table without a quarantine: %v", err)
	}
}

// quarantine renders the quarantine's rows as "id rules flow batch
// retries", sorted (a NULL id as -1).
func (h *harness) quarantine(name string) []string {
	h.t.Helper()
	b, err := processors.ReadTable(context.Background(), h.store, name, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for i := range b.Len() {
		get := func(c string) domain.Value { return b.Columns[b.Schema.Index(c)].Value(i) }
		id := int64(-1)
		if !get("id").IsNull() {
			id = get("id").AsInt()
		}
		var rules []string
		for _, v := range get("_failed_expectations").AsList() {
			rules = append(rules, v.AsString())
		}
		out = append(out, fmtRow(id, rules, get("_flow").AsString(), get("_batch_id").AsInt(), get("_retries").AsInt()))
	}
	slices.Sort(out)
	return out
}

func fmtRow(id int64, rules []string, flow string, batch, retries int64) string {
	r := ""
	for i, x := range rules {
		if i > 0 {
			r += ","
		}
		r += x
	}
	return fmt.Sprintf("%d %s %s %d %d", id, r, flow, batch, retries)
}
