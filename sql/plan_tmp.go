package sql

func noAggregateIn(e Expr, clause string) error                         { return nil }
func needsAggregate(s *Select, items []item, orderBy []*OrderItem) bool { return false }
func (pl *planner) aggregate(s *Select, items []item, orderBy []*OrderItem, src op, sc scope) (op, scope, func(Expr) (node, error), error) {
	return nil, scope{}, nil, nil
}
func windowCalls(items []item, q Expr, orderBy []*OrderItem) []*FuncCall { return nil }
func (pl *planner) windows(s *Select, calls []*FuncCall, src op, sc scope, subst func(Expr) (node, error)) (op, scope, func(Expr) (node, error), error) {
	return nil, scope{}, nil, nil
}
