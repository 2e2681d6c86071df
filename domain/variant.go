package domain

import "sort"

// AppendVariant appends n as a VARIANT's text: compact, each object's keys
// sorted (as Spark's variant keeps them), numbers as written; dup is a key
// an object has twice, which a variant cannot hold.
func AppendVariant(b []byte, n *JSONNode) (_ []byte, dup string) {
	switch n.Kind {
	case JSONNull:
		return append(b, "null"...), ""
	case JSONBool, JSONNumber:
		return append(b, n.Text...), ""
	case JSONString:
		return AppendJSONString(b, n.Text), ""
	case JSONArray:
		b = append(b, '[')
		for i, it := range n.Items {
			if i > 0 {
				b = append(b, ',')
			}
			if b, dup = AppendVariant(b, it); dup != "" {
				return b, dup
			}
		}
		return append(b, ']'), ""
	}
	order := make([]int, len(n.Keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return n.Keys[order[i]] < n.Keys[order[j]] })
	b = append(b, '{')
	for k, i := range order {
		if k > 0 {
			if n.Keys[order[k-1]] == n.Keys[i] {
				return b, n.Keys[i]
			}
			b = append(b, ',')
		}
		b = AppendJSONString(b, n.Keys[i])
		b = append(b, ':')
		if b, dup = AppendVariant(b, n.Items[i]); dup != "" {
			return b, dup
		}
	}
	return append(b, '}'), ""
}
