// Package expectations checks a dataset's data quality rules on the rows
// written to it: it counts the rows that pass and fail each rule, drops the
// rows that fail a drop rule, and fails the batch on a row that fails a fail
// rule, before anything of the batch is written.
package expectations

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql"
)

// Checker checks one dataset's expectations. Conditions are compiled for
// each schema the batches come with (a table's schema can evolve), once.
type Checker struct {
	dataset  string
	exps     []domain.Expectation
	parsed   []sql.Expr
	compiled map[string][]*sql.Compiled // by schema
}

// New parses the expectations of a dataset. A condition that does not parse
// is an error with its code and position.
func New(dataset string, exps []domain.Expectation) (*Checker, error) {
	c := &Checker{dataset: dataset, exps: exps, compiled: map[string][]*sql.Compiled{}}
	for _, e := range exps {
		x, err := sql.ParseExpr("expectation "+e.Name, e.Condition)
		if err != nil {
			return nil, err
		}
		c.parsed = append(c.parsed, x)
	}
	return c, nil
}

// Compile checks the conditions against a schema: unknown columns, wrong
// types. Check does the same for each batch's schema.
func (c *Checker) Compile(s domain.Schema) ([]*sql.Compiled, error) {
	key := s.String()
	if cs, ok := c.compiled[key]; ok {
		return cs, nil
	}
	cs := make([]*sql.Compiled, len(c.parsed))
	for i, x := range c.parsed {
		comp, err := sql.Compile(x, s)
		if err != nil {
			return nil, fmt.Errorf("expectation %s on %s: %w", c.exps[i].Name, c.dataset, err)
		}
		if k := comp.Type().Kind; k != domain.KindBool && k != domain.KindNull {
			return nil, domain.Errorf(domain.CodeDatatypeMismatch, "expectation %s on %s is %s, not a boolean condition", c.exps[i].Name, c.dataset, comp.Type())
		}
		cs[i] = comp
	}
	c.compiled[key] = cs
	return cs, nil
}

// Check evaluates every expectation on every row of b. It returns the rows
// to write (without those a drop rule failed) and the counts. A row that
// fails a fail rule is an EXPECTATION_VIOLATION error naming the rule and
// the row's values.
func (c *Checker) Check(b *domain.Batch) (*domain.Batch, *domain.DataQuality, error) {
	cs, err := c.Compile(b.Schema)
	if err != nil {
		return nil, nil, err
	}
	dq := &domain.DataQuality{}
	drop := make([]bool, b.Len())
	now := time.Now() // current_timestamp is the time of this micro-batch
	for i, comp := range cs {
		col, err := comp.EvalAt(b, now)
		if err != nil {
			return nil, nil, fmt.Errorf("expectation %s on %s: %w", c.exps[i].Name, c.dataset, err)
		}
		res := domain.ExpectationResult{Name: c.exps[i].Name, Dataset: c.dataset}
		for r := 0; r < b.Len(); r++ {
			if col.Kind == domain.KindNull || col.IsNull(r) || col.Ints[r] == 1 {
				res.PassedRecords++
				continue
			}
			res.FailedRecords++
			switch c.exps[i].Action {
			case domain.ExpectFail:
				e := c.exps[i]
				err := domain.Errorf(domain.CodeExpectationViolation, "a row of %s fails expectation %s (%s): %s",
					c.dataset, e.Name, e.Condition, describeRow(b, r)).WithNames(c.dataset)
				if e.File != "" {
					err.Message = fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, err.Message)
					err.At(e.File, e.Line, e.Column)
				}
				return nil, nil, err
			case domain.ExpectDrop:
				drop[r] = true
			}
		}
		dq.Expectations = append(dq.Expectations, res)
	}
	var keep []int
	for r, d := range drop {
		if d {
			dq.DroppedRecords++
		} else {
			keep = append(keep, r)
		}
	}
	if dq.DroppedRecords == 0 {
		return b, dq, nil
	}
	return b.Select(keep), dq, nil
}

// describeRow renders a row as name=value pairs for an error message.
func describeRow(b *domain.Batch, r int) string {
	parts := make([]string, len(b.Columns))
	for i, c := range b.Columns {
		v := c.Value(r)
		s := v.String()
		if v.Kind() == domain.KindString {
			s = fmt.Sprintf("%q", s)
		}
		parts[i] = b.Schema.Fields[i].Name + "=" + s
	}
	return strings.Join(parts, ", ")
}

// Add adds the counts of one batch to a running total.
func Add(total *domain.DataQuality, b *domain.DataQuality) {
	total.DroppedRecords += b.DroppedRecords
	for _, e := range b.Expectations {
		found := false
		for i := range total.Expectations {
			if total.Expectations[i].Name == e.Name && total.Expectations[i].Dataset == e.Dataset {
				total.Expectations[i].PassedRecords += e.PassedRecords
				total.Expectations[i].FailedRecords += e.FailedRecords
				found = true
			}
		}
		if !found {
			total.Expectations = append(total.Expectations, e)
		}
	}
}
