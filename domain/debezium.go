package domain

import (
	"fmt"
	"strconv"
	"strings"
)

// DebeziumOp, DebeziumSourceTS and DebeziumSequence name the columns a
// Debezium event adds to the changed row's.
const (
	DebeziumOp       = "_op"
	DebeziumSourceTS = "_source_ts"
	DebeziumSequence = "_sequence"
)

var debeziumOps = map[string]string{"c": "INSERT", "u": "UPDATE", "d": "DELETE", "r": "READ", "t": "TRUNCATE"}

// DebeziumEvent is a Debezium change event taken apart.
type DebeziumEvent struct {
	Op       string    // INSERT, UPDATE, DELETE, READ or TRUNCATE
	Image    *JSONNode // the row's image; nil for a truncate
	SourceTS *int64    // milliseconds since the epoch
	Sequence string
}

// ParseDebezium takes a Debezium change event apart: a JSON object with or
// without the schema envelope ({"schema": ..., "payload": {...}}), with op
// (c, u, d, r, t), before and after images and source. The sequence is the
// change's position in the source's log as text that sorts in log order:
// the LSN (PostgreSQL), binlog file, position and row (MySQL), change LSN
// (SQL Server), SCN (Oracle), else the source time in milliseconds.
func ParseDebezium(text string) (DebeziumEvent, error) {
	var ev DebeziumEvent
	n, err := ParseJSON(text)
	if err != nil {
		return ev, err
	}
	if n.Kind != JSONObject {
		return ev, fmt.Errorf("a Debezium event is a JSON object")
	}
	if p := member(n, "payload"); p != nil && member(n, "schema") != nil {
		n = p
		if n.Kind != JSONObject {
			return ev, fmt.Errorf("the payload of a Debezium event is not an object")
		}
	}
	opNode := member(n, "op")
	if opNode == nil || opNode.Kind != JSONString {
		return ev, fmt.Errorf("a Debezium event has no op")
	}
	op, ok := debeziumOps[opNode.Text]
	if !ok {
		return ev, fmt.Errorf("op %q is not one of c, u, d, r, t", opNode.Text)
	}
	ev.Op = op
	image := "after"
	switch op {
	case "DELETE":
		image = "before"
	case "TRUNCATE":
		image = ""
	}
	if image != "" {
		img := member(n, image)
		if img == nil || img.Kind != JSONObject {
			return ev, fmt.Errorf("a Debezium %s event has no %s image", strings.ToLower(op), image)
		}
		ev.Image = img
	}
	src := member(n, "source")
	ts := member(src, "ts_ms")
	if ts == nil {
		ts = member(n, "ts_ms")
	}
	if ts != nil && ts.Kind == JSONNumber {
		if v, err := strconv.ParseInt(ts.Text, 10, 64); err == nil {
			ev.SourceTS = &v
		}
	}
	ev.Sequence = debeziumPosition(src, ev.SourceTS)
	return ev, nil
}

// debeziumPosition renders a change's position in its source's log as text
// that sorts in log order.
func debeziumPosition(src *JSONNode, ts *int64) string {
	num := func(key string) (int64, bool) {
		n := member(src, key)
		if n == nil || n.Kind != JSONNumber {
			return 0, false
		}
		v, err := strconv.ParseInt(n.Text, 10, 64)
		return v, err == nil
	}
	str := func(key string) (string, bool) {
		n := member(src, key)
		if n == nil || n.Kind != JSONString {
			return "", false
		}
		return n.Text, true
	}
	if lsn, ok := num("lsn"); ok { // PostgreSQL
		return fmt.Sprintf("%020d", lsn)
	}
	if file, ok := str("file"); ok { // MySQL: binlog file, position, row in the event
		pos, _ := num("pos")
		row, _ := num("row")
		return fmt.Sprintf("%s/%020d/%010d", file, pos, row)
	}
	if lsn, ok := str("change_lsn"); ok { // SQL Server
		return lsn
	}
	if scn, ok := str("scn"); ok { // Oracle
		return fmt.Sprintf("%030s", scn)
	}
	if ts != nil {
		return fmt.Sprintf("%020d", *ts)
	}
	return ""
}

// member returns an object's value of key (the last, if repeated); nil
// when n is not an object or has no such key.
func member(n *JSONNode, key string) *JSONNode {
	if n == nil || n.Kind != JSONObject {
		return nil
	}
	var out *JSONNode
	for i, k := range n.Keys {
		if k == key {
			out = n.Items[i]
		}
	}
	return out
}
