package domain

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
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
	// Logical holds, for an event with the schema envelope, the logical
	// type of each column of the image that has one (a time, a decimal),
	// whose value Debezium writes as a number or bytes: see
	// DebeziumLogical.Value.
	Logical map[string]DebeziumLogical
}

// DebeziumLogical is the logical type of a column in a Debezium schema: the
// schema's name, and a decimal's scale and precision (0 when the schema does
// not give it).
type DebeziumLogical struct {
	Name      string
	Scale     int
	Precision int
}

// Value converts a column's JSON value to what its logical type means:
// dates (days) to DATE; timestamps (milliseconds, microseconds,
// nanoseconds, or zoned text) to TIMESTAMP; decimals (the unscaled
// big-endian bytes, base64) to DECIMAL(p, s) of the schema's precision (38
// when it gives none), or to their exact text, a STRING, beyond 38 digits.
// ok is false for a logical type it does not convert, or a value that does
// not fit it.
func (l DebeziumLogical) Value(n *JSONNode) (Value, bool) {
	if n.Kind == JSONNull {
		return Null(), true
	}
	integer := func() (int64, bool) {
		if n.Kind != JSONNumber {
			return 0, false
		}
		v, err := strconv.ParseInt(n.Text, 10, 64)
		return v, err == nil
	}
	switch l.Name {
	case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date":
		if d, ok := integer(); ok {
			return DateDays(d), true
		}
	case "io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp":
		if ms, ok := integer(); ok {
			return TimestampMicros(ms * 1000), true
		}
	case "io.debezium.time.MicroTimestamp":
		if us, ok := integer(); ok {
			return TimestampMicros(us), true
		}
	case "io.debezium.time.NanoTimestamp":
		if ns, ok := integer(); ok {
			return TimestampMicros(ns / 1000), true
		}
	case "io.debezium.time.ZonedTimestamp":
		if n.Kind == JSONString {
			if t, err := time.Parse(time.RFC3339Nano, n.Text); err == nil {
				return Timestamp(t), true
			}
		}
	case "org.apache.kafka.connect.data.Decimal":
		if n.Kind == JSONString {
			if b, err := base64.StdEncoding.DecodeString(n.Text); err == nil {
				p := l.Precision
				if p < max(l.Scale, 1) || p > MaxDecimalPrecision {
					p = MaxDecimalPrecision
				}
				x := new(big.Int).SetBytes(b)
				if len(b) > 0 && b[0]&0x80 != 0 {
					x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
				}
				if u, ok := Int128FromBig(x); ok && l.Scale >= 0 && l.Scale <= p && u.FitsPrecision(p) {
					return Decimal(u, p, l.Scale), true
				}
				return String(decimalText(b, l.Scale)), true
			}
		}
	}
	return Null(), false
}

// decimalText renders an unscaled two's-complement big-endian integer with
// scale digits after the point.
func decimalText(b []byte, scale int) string {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	digits := x.String()
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	if scale > 0 {
		for len(digits) <= scale {
			digits = "0" + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		digits = "-" + digits
	}
	return digits
}

// debeziumLogical reads the logical types of the columns of an image from
// the schema envelope: the struct field named image of the envelope's
// fields.
func debeziumLogical(schema *JSONNode, image string) map[string]DebeziumLogical {
	fields := member(schema, "fields")
	if fields == nil || fields.Kind != JSONArray {
		return nil
	}
	var out map[string]DebeziumLogical
	for _, f := range fields.Items {
		if name := member(f, "field"); name == nil || name.Text != image {
			continue
		}
		cols := member(f, "fields")
		if cols == nil || cols.Kind != JSONArray {
			return nil
		}
		for _, c := range cols.Items {
			name, col := member(c, "name"), member(c, "field")
			if name == nil || col == nil || name.Kind != JSONString || col.Kind != JSONString {
				continue
			}
			l := DebeziumLogical{Name: name.Text}
			if sc := member(member(c, "parameters"), "scale"); sc != nil {
				l.Scale, _ = strconv.Atoi(sc.Text)
			}
			if pr := member(member(c, "parameters"), "connect.decimal.precision"); pr != nil {
				l.Precision, _ = strconv.Atoi(pr.Text)
			}
			if out == nil {
				out = map[string]DebeziumLogical{}
			}
			out[col.Text] = l
		}
	}
	return out
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
	var schema *JSONNode
	if p := member(n, "payload"); p != nil && member(n, "schema") != nil {
		n, schema = p, member(n, "schema")
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
		ev.Logical = debeziumLogical(schema, image)
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

// Member returns an object's value of key (the last, if repeated); nil
// when n is not an object or has no such key.
func (n *JSONNode) Member(key string) *JSONNode { return member(n, key) }

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
