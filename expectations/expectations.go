// Package expectations checks a dataset's data quality rules on the rows
// written to it: it counts the rows that pass and fail each rule, drops the
// rows that fail a drop rule, and fails the batch on a row that fails a fail
// rule, before anything of the batch is written.
package expectations

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql"
	"github.com/sluicehq/sluice/sql/syntax"
)

// Checker checks one dataset's expectations. It is built once, when the
// pipeline is loaded, and serves every flow into the dataset. Conditions are
// compiled once for each schema the batches come with (a table's schema can
// evolve); the loader compiles them for the schema it knows.
type Checker struct {
	dataset string
	exps    []domain.Expectation
	parsed  []syntax.Expr

	mu       sync.Mutex                 // flows into one dataset check batches at once
	compiled map[string][]*sql.Compiled // by schema
}

// New parses the expectations of a dataset. A condition that does not parse
// is an error with its code and position.
func New(dataset string, exps []domain.Expectation) (*Checker, error) {
	parsed := make([]syntax.Expr, len(exps))
	for i, e := range exps {
		x, err := syntax.ParseExpr("expectation "+e.Name, e.Condition)
		if err != nil {
			return nil, err
		}
		parsed[i] = x
	}
	return Parsed(dataset, exps, parsed), nil
}

// Parsed makes a checker of conditions parsed already (the CONSTRAINTs of a
// SQL file, whose positions are in the file).
func Parsed(dataset string, exps []domain.Expectation, conditions []syntax.Expr) *Checker {
	return &Checker{dataset: dataset, exps: exps, parsed: conditions, compiled: map[string][]*sql.Compiled{}}
}

// Problems compiles the conditions for schema s, as Check will for batches
// of that schema, and returns what is wrong with each one that does not
// compile: an unknown column, a condition that is not boolean. The errors
// are the compiler's, placed where the condition was parsed.
func (c *Checker) Problems(s domain.Schema) []Problem {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, errs, bad := c.compile(s)
	out := make([]Problem, len(errs))
	for i, err := range errs {
		out[i] = Problem{Expectation: c.exps[bad[i]], Err: err}
	}
	return out
}

// Problem is why one expectation does not compile.
type Problem struct {
	Expectation domain.Expectation
	Err         error
}

// compile returns the conditions compiled for s, compiling them the first
// time s is seen, or the errors and the indexes of the expectations that
// do not compile. Callers hold c.mu.
func (c *Checker) compile(s domain.Schema) (cs []*sql.Compiled, errs []error, bad []int) {
	key := s.String()
	if cs, ok := c.compiled[key]; ok {
		return cs, nil, nil
	}
	cs = make([]*sql.Compiled, len(c.parsed))
	for i, x := range c.parsed {
		comp, err := sql.Compile(x, s)
		if err != nil {
			errs, bad = append(errs, err), append(bad, i)
			continue
		}
		if k := comp.Type().Kind; k != domain.KindBool && k != domain.KindNull {
			errs = append(errs, &syntax.Error{Code: domain.CodeDatatypeMismatch, Pos: x.Position(),
				Message: fmt.Sprintf("expectation %s is %s, not a boolean condition", c.exps[i].Name, comp.Type())})
			bad = append(bad, i)
			continue
		}
		cs[i] = comp
	}
	if errs != nil {
		return nil, errs, bad
	}
	c.compiled[key] = cs
	return cs, nil, nil
}

// Check evaluates every expectation on every row of b. It returns the rows
// to write (without those a drop rule failed) and the counts. A row that
// fails a fail rule is an EXPECTATION_VIOLATION error naming the rule and
// the row's values.
func (c *Checker) Check(b *domain.Batch) (*domain.Batch, *domain.DataQuality, error) {
	kept, _, dq, err := c.CheckRejected(b)
	return kept, dq, err
}

// CheckRejected is Check that also returns the rows the drop rules failed,
// with the names of the rules each failed (nil when none was dropped).
func (c *Checker) CheckRejected(b *domain.Batch) (*domain.Batch, *domain.Rejected, *domain.DataQuality, error) {
	// Compiled conditions keep the time of the batch they evaluate: one
	// batch at a time.
	c.mu.Lock()
	defer c.mu.Unlock()
	cs, errs, bad := c.compile(b.Schema)
	if errs != nil {
		return nil, nil, nil, fmt.Errorf("expectation %s on %s: %w", c.exps[bad[0]].Name, c.dataset, errs[0])
	}
	dq := &domain.DataQuality{}
	drop := make([]bool, b.Len())
	var failed map[int][]string // the drop rules each dropped row failed
	now := time.Now()           // current_timestamp is the time of this micro-batch
	for i, comp := range cs {
		col, err := comp.EvalAt(b, now)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("expectation %s on %s: %w", c.exps[i].Name, c.dataset, err)
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
				return nil, nil, nil, err
			case domain.ExpectDrop:
				drop[r] = true
				if failed == nil {
					failed = map[int][]string{}
				}
				failed[r] = append(failed[r], c.exps[i].Name)
			}
		}
		dq.Expectations = append(dq.Expectations, res)
	}
	var keep, dropped []int
	for r, d := range drop {
		if d {
			dq.DroppedRecords++
			dropped = append(dropped, r)
		} else {
			keep = append(keep, r)
		}
	}
	if dq.DroppedRecords == 0 {
		return b, nil, dq, nil
	}
	rejected := &domain.Rejected{Rows: b.Select(dropped), Failed: make([][]string, len(dropped)), Index: dropped}
	for i, r := range dropped {
		rejected.Failed[i] = failed[r]
	}
	return b.Select(keep), rejected, dq, nil
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
