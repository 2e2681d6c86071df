// Command gopipeline is a pipeline declared in Go and run through the sluice
// command line (cli.Main), as a team's own binary would be. The tests of the
// cli package build it and run it end to end.
//
// Under the pipeline directory: data/*.json (orders: id, customer, qty,
// amount, big, ts, day). The pipeline:
//
//	orders  streaming table over data/
//	typed   streaming table over orders: typed columns (every kind of value),
//	        ratio = amount / qty
//	        (with configuration strict: "true", a zero qty fails the flow
//	        with DIVIDE_BY_ZERO instead of giving an infinity)
//	totals  materialized view: rows and amount per customer
//	export  foreachBatch sink fed by orders, appending "batch_id rows" lines
//	        to export.log (after sleeping for configuration sink_delay, a
//	        Go duration, when set)
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sluicehq/sluice/cli"
	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/pipeline"
	"github.com/sluicehq/sluice/sources"
)

func main() { cli.Main(load) }

var typedSchema = domain.NewSchema(
	domain.Field{Name: "id", Type: domain.TypeInt64},
	domain.Field{Name: "customer", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "big", Type: domain.TypeInt64, Nullable: true},
	domain.Field{Name: "ratio", Type: domain.TypeFloat64, Nullable: true},
	domain.Field{Name: "ts", Type: domain.TypeTimestamp, Nullable: true},
	domain.Field{Name: "day", Type: domain.TypeDate, Nullable: true},
	domain.Field{Name: "tags", Type: domain.ListOf(domain.TypeString), Nullable: true},
	domain.Field{Name: "flag", Type: domain.TypeBool, Nullable: true},
	domain.Field{Name: "attrs", Type: domain.MapOf(domain.TypeString, domain.TypeInt64), Nullable: true},
	domain.Field{Name: "wait", Type: domain.Type{Kind: domain.KindDayTimeInterval}, Nullable: true},
	domain.Field{Name: "term", Type: domain.Type{Kind: domain.KindYearMonthInterval}, Nullable: true},
	domain.Field{Name: "info", Type: domain.StructOf(domain.Field{Name: "note", Type: domain.TypeString, Nullable: true},
		domain.Field{Name: "qty", Type: domain.TypeFloat64, Nullable: true}), Nullable: true},
)

var totalsSchema = domain.NewSchema(
	domain.Field{Name: "customer", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "orders", Type: domain.TypeInt64},
	domain.Field{Name: "amount", Type: domain.TypeFloat64},
)

func load(proj *pipeline.Project) (*pipeline.Pipeline, domain.Problems) {
	p := pipeline.New("gopipeline")
	p.StreamingTable("orders", pipeline.StreamFrom(sources.Files(filepath.Join(proj.Dir, "data"), sources.FileOptions{Format: "json", MaxFilesPerTrigger: 10})))
	typed := pipeline.ReadStream("orders")
	if proj.Configuration["strict"] == "true" {
		typed = typed.Transform(domain.TransformFunc(noZeroQty))
	}
	p.StreamingTable("typed", typed.Map(typedSchema, func(r pipeline.Row) ([]domain.Value, error) {
		amount, qty := number(r.Get("amount")), number(r.Get("qty"))
		var ts, day domain.Value
		if t, err := time.Parse(time.RFC3339Nano, r.Get("ts").AsString()); err == nil {
			ts = domain.Timestamp(t)
		}
		if d, err := time.Parse("2006-01-02", r.Get("day").AsString()); err == nil {
			day = domain.Date(d)
		}
		return []domain.Value{r.Get("id"), r.Get("customer"), r.Get("big"), domain.Float(amount / qty), ts, day,
			domain.List(domain.String(r.Get("customer").AsString()), domain.String("x\"y")), domain.Bool(qty > 1),
			domain.Map(domain.MapEntry(domain.String("id"), r.Get("id"))), domain.DayTimeInterval(int64(qty) * 90_000_000),
			domain.YearMonthInterval(int64(qty) * 13), domain.Struct(domain.Null(), domain.Float(qty))}, nil
	}))
	p.MaterializedView("totals", pipeline.Read("orders").Transform(domain.TransformFunc(totals)))
	export := filepath.Join(proj.Dir, "export.log")
	delay, _ := time.ParseDuration(proj.Configuration["sink_delay"])
	p.ForeachBatchSink("export", func(_ context.Context, rows *domain.Batch, batchID int64) error {
		if delay > 0 {
			// says it is delivering, for tests that interrupt it then
			if err := os.WriteFile(export+".busy", nil, 0o644); err != nil {
				return err
			}
		}
		time.Sleep(delay) // a slow sink, deaf to cancellation
		f, err := os.OpenFile(export, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = fmt.Fprintf(f, "%d %d\n", batchID, rows.Len())
		return err
	})
	p.AppendFlow("export", pipeline.ReadStream("orders"), pipeline.Name("export_orders"))
	return p, nil
}

// noZeroQty fails a batch holding a zero qty as an SQL expression amount / qty
// would, with the place of the expression and the offending values.
func noZeroQty(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
	qi, ai, ii := b.Schema.Index("qty"), b.Schema.Index("amount"), b.Schema.Index("id")
	for i := 0; i < b.Len(); i++ {
		if qty := number(b.Columns[qi].Value(i)); qty == 0 {
			return nil, domain.Errorf(domain.CodeDivideByZero, "typed.sql:3:10: amount / qty: %v / %v: division by zero (order %d)",
				number(b.Columns[ai].Value(i)), qty, b.Columns[ii].Value(i).AsInt()).At("typed.sql", 3, 10)
		}
	}
	return b, nil
}

func number(v domain.Value) float64 {
	if v.Kind() == domain.KindFloat64 {
		return v.AsFloat()
	}
	return float64(v.AsInt())
}

// totals counts the orders and sums the amount per customer.
func totals(_ context.Context, b *domain.Batch) (*domain.Batch, error) {
	type acc struct {
		n   int64
		sum float64
	}
	per := map[string]*acc{}
	ci, ai := b.Schema.Index("customer"), b.Schema.Index("amount")
	for i := 0; i < b.Len(); i++ {
		c := b.Columns[ci].Value(i).AsString()
		if per[c] == nil {
			per[c] = &acc{}
		}
		per[c].n++
		per[c].sum += number(b.Columns[ai].Value(i))
	}
	names := make([]string, 0, len(per))
	for c := range per {
		names = append(names, c)
	}
	sort.Strings(names)
	out := domain.NewBatch(totalsSchema, len(names))
	for _, c := range names {
		if err := out.AppendRow(domain.String(c), domain.Int(per[c].n), domain.Float(per[c].sum)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
