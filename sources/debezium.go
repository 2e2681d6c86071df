package sources

import (
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// Debezium change events, one JSON object per line (domain.ParseDebezium
// takes each apart). Each becomes a row of the changed row's columns (the
// after image; the before image for a delete; none for a truncate), then:
//
//	_op         INSERT (op c), UPDATE (u), DELETE (d), READ (r, a snapshot
//	            row) or TRUNCATE (t)
//	_source_ts  when the change was made at the source (source.ts_ms, else
//	            the event's ts_ms)
//	_sequence   the change's position in the source's log, as text that
//	            sorts in log order: the LSN (PostgreSQL), binlog file,
//	            position and row (MySQL), change LSN (SQL Server), SCN
//	            (Oracle), else the source time in milliseconds
//
// so that AUTO CDC ... APPLY AS DELETE WHEN _op = 'DELETE' APPLY AS
// TRUNCATE WHEN _op = 'TRUNCATE' SEQUENCE BY _sequence replicates the
// source table. A line "null" (a Kafka tombstone) is skipped. Values are as
// Debezium writes them, except where the schema envelope gives a column a
// logical type (domain.DebeziumLogical): dates and timestamps become DATE
// and TIMESTAMP, decimals their exact text.

// decodeDebeziumLines adds the change events of the lines of data to b.
func decodeDebeziumLines(b *builder, data string) error {
	var r domain.JSONObjectReader
	return eachLine(data, func(line int, text string) error {
		text = strings.TrimRight(text, "\r")
		if blankLine(text) || strings.TrimSpace(text) == "null" {
			return nil
		}
		b.currentLine = b.lineBase + line
		ev, err := domain.ParseDebezium(text)
		if err == nil && ev.Image != nil {
			err = r.Read(ev.Image.Raw)
		}
		if err != nil {
			return b.badRecord(text, err.Error())
		}
		n := 0
		if ev.Image != nil {
			if ev.Logical == nil {
				b.addFields(&r)
			} else {
				b.addLogicalFields(&r, ev)
			}
			n = len(r.Fields)
		}
		ts := domain.Null()
		if ev.SourceTS != nil {
			ts = domain.TimestampMicros(*ev.SourceTS * 1000)
		}
		for k, col := range []struct {
			name string
			v    domain.Value
		}{{domain.DebeziumOp, domain.String(ev.Op)}, {domain.DebeziumSourceTS, ts}, {domain.DebeziumSequence, domain.String(ev.Sequence)}} {
			b.put(b.columnAt(n+k, col.name), col.name, col.v, "")
		}
		return b.endRow()
	})
}

// addLogicalFields adds the fields of an image whose schema gives some of
// them a logical type (a time, a decimal): those take the value the type
// means, the others are read as JSON.
func (b *builder) addLogicalFields(r *domain.JSONObjectReader, ev domain.DebeziumEvent) {
	for i := range r.Fields {
		f := &r.Fields[i]
		c := b.columnAt(i, f.Key)
		if l, ok := ev.Logical[f.Key]; ok {
			if v, ok := l.Value(ev.Image.Member(f.Key)); ok {
				b.put(c, f.Key, v, f.Text)
				continue
			}
		}
		if b.appendScalar(c, f.Kind, f.Num, f.Text) {
			continue
		}
		v, raw := f.Value()
		b.put(c, f.Key, v, raw)
	}
}
