package sql

import "github.com/sluicehq/sluice/domain"

func (c *compiler) jsonPath(e *JSONPath) (node, error) {
	return nil, exprErr(domain.CodeNotImplemented, e.Pos, "todo")
}
