package sql

import (
	"github.com/sluicehq/sluice/domain"
)

// caseNode is a searched CASE: conds[k] selects results[k]; the last result
// is the ELSE (a NULL literal when absent). Each result is evaluated only on
// the rows that select it, each condition only on the rows no earlier
// condition took, as in Spark.
type caseNode struct {
	conds   []node
	results []node
	t       domain.Type
}

func (n *caseNode) typ() domain.Type { return n.t }
func (n *caseNode) mayFail() bool    { return anyMayFail(n.conds) || anyMayFail(n.results) }

func (n *caseNode) eval(b *domain.Batch) (*domain.Column, error) {
	rows := b.Len()
	out := newCol(n.t.Kind, rows)
	out.Nulls = allNulls(rows)
	remaining := everyRow(rows)
	first := true
	for k, cond := range n.conds {
		if len(remaining) == 0 {
			break
		}
		var cc *domain.Column
		var err error
		if first {
			cc, err = cond.eval(b)
		} else {
			cc, err = cond.eval(gather(b, remaining))
		}
		if err != nil {
			return nil, err
		}
		first = false
		var hit, miss []int
		for j, orig := range remaining {
			if cc.Ints[j] == 1 && !isNullAt(cc.Nulls, j) {
				hit = append(hit, orig)
			} else {
				miss = append(miss, orig)
			}
		}
		if len(hit) > 0 {
			rc, err := evalSel(n.results[k], b, hit, rows)
			if err != nil {
				return nil, err
			}
			scatter(out, rc, hit)
		}
		remaining = miss
	}
	if len(remaining) > 0 {
		rc, err := evalSel(n.results[len(n.results)-1], b, remaining, rows)
		if err != nil {
			return nil, err
		}
		scatter(out, rc, remaining)
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// evalSel evaluates n on rows sel of b (which has rows rows), skipping the
// gather when sel is every row.
func evalSel(n node, b *domain.Batch, sel []int, rows int) (*domain.Column, error) {
	if len(sel) == rows {
		return n.eval(b)
	}
	return n.eval(gather(b, sel))
}

// coalesceNode returns the first non-NULL argument, evaluating each argument
// only on the rows still NULL.
type coalesceNode struct {
	args []node
	t    domain.Type
}

func (n *coalesceNode) typ() domain.Type { return n.t }
func (n *coalesceNode) mayFail() bool    { return anyMayFail(n.args) }

func (n *coalesceNode) eval(b *domain.Batch) (*domain.Column, error) {
	rows := b.Len()
	out := newCol(n.t.Kind, rows)
	out.Nulls = allNulls(rows)
	remaining := everyRow(rows)
	for _, a := range n.args {
		if len(remaining) == 0 {
			break
		}
		c, err := evalSel(a, b, remaining, rows)
		if err != nil {
			return nil, err
		}
		scatter(out, c, remaining)
		var still []int
		for _, i := range remaining {
			if out.Nulls[i] {
				still = append(still, i)
			}
		}
		remaining = still
	}
	out.Nulls = dropNulls(out.Nulls)
	return out, nil
}

// anyMayFail reports whether evaluating any of nodes may raise a row-level
// error.
func anyMayFail(nodes []node) bool {
	for _, n := range nodes {
		if n.mayFail() {
			return true
		}
	}
	return false
}

// everyRow lists the row indexes 0 to rows-1.
func everyRow(rows int) []int {
	idx := make([]int, rows)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
