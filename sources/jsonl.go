package sources

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// JSON lines: one object per line, read by domain.JSONObjectReader, so that
// a line costs one pass and no allocation beyond its string values with
// escapes (the others share the file's memory). Nested objects and arrays
// are checked and kept as their JSON text in a string column, to be taken
// apart with JSON functions in queries.

// decodeJSONLines adds the records of the lines of data to b. Blank lines are
// skipped. Line numbers in errors are 1-based lines of the file (data starts
// after b.lineBase lines).
func decodeJSONLines(b *builder, data string) error {
	var r domain.JSONObjectReader
	return eachLine(data, func(line int, text string) error {
		text = strings.TrimRight(text, "\r")
		if blankLine(text) {
			return nil
		}
		b.currentLine = b.lineBase + line
		// The record goes into the row only once the whole line parsed, so
		// that a bad line leaves no trace (no new column, no widened type).
		if err := r.Read(text); err != nil {
			return b.badRecord(text, err.Error())
		}
		b.addFields(&r)
		return b.endRow()
	})
}

// addFields adds the fields of the object r read to the row being built.
func (b *builder) addFields(r *domain.JSONObjectReader) {
	for i := range r.Fields {
		f := &r.Fields[i]
		c := b.columnAt(i, f.Key)
		if b.appendScalar(c, f.Kind, f.Num, f.Text) {
			continue
		}
		v, raw := f.Value()
		if c != nil && b.declared != nil && jsonTyped(c.field.Type) {
			b.putAs(c, f.Key, v, raw, func(t domain.Type) (domain.Value, error) {
				n, err := domain.ParseJSON(f.JSON())
				if err != nil {
					return domain.Null(), err
				}
				return jsonAs(n, t)
			})
			continue
		}
		b.put(c, f.Key, v, raw)
	}
}

// blankLine reports whether a line holds JSON whitespace only.
func blankLine(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// decodeJSONDocument adds the records of multi-line JSON (multiLine): JSON
// values one after another, each an object (a record) or an array of
// objects. Text that does not parse is one bad record, to the end of data:
// no record boundary can be found in it.
func decodeJSONDocument(b *builder, data string) error {
	var r domain.JSONObjectReader
	line, counted := 1, 0 // the line at offset counted
	lineAt := func(off int) int {
		line += strings.Count(data[counted:off], "\n")
		counted = off
		return b.lineBase + line
	}
	record := func(raw string, off int) error {
		b.currentLine = lineAt(off)
		if err := r.Read(raw); err != nil {
			return b.badRecord(raw, "a JSON document holds a value that is not an object")
		}
		b.addFields(&r)
		return b.endRow()
	}
	return domain.ParseJSONSequence(data, func(n *domain.JSONNode, off int) error {
		if n.Kind != domain.JSONArray {
			return record(n.Raw, off)
		}
		for _, it := range n.Items {
			if err := record(it.Raw, it.Offset); err != nil {
				return err
			}
		}
		return nil
	}, func(off int, err *domain.JSONError) error {
		b.currentLine = lineAt(off)
		return b.badRecord(strings.TrimSpace(data[off:]), fmt.Sprintf("offset %d: %s", err.Offset-off+1, err.Reason))
	})
}

// DecodeJSONLines reads JSON lines (sluice table --format jsonl, the API's
// rows) into a batch of schema; a line that does not fit is an error
// naming it.
func DecodeJSONLines(data string, schema domain.Schema) (*domain.Batch, error) {
	b := newBuilder(&schema, false)
	b.reserve(strings.Count(data, "\n") + 1)
	if err := decodeJSONLines(b, data); err != nil {
		return nil, err
	}
	return b.batch()
}
