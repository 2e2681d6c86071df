package domain

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// eventOpts compares events decoded from arbitrary bytes with the same events
// after a second round trip. Details is JSON with omitempty, so an empty list
// or map comes back absent, and raw JSON (offsets) comes back compacted, the
// way json.Marshal writes it.
var eventOpts = cmp.Options{
	cmpopts.EquateEmpty(),
	cmp.FilterPath(isRawJSON, cmp.FilterValues(notBothEmpty, cmp.Comparer(func(a, b json.RawMessage) bool {
		canon := func(m json.RawMessage) string {
			if len(m) == 0 {
				return ""
			}
			out, err := json.Marshal(m)
			if err != nil {
				return "invalid: " + string(m)
			}
			return string(out)
		}
		return canon(a) == canon(b)
	}))),
}

// nonCanonicalEvents are valid event encodings with details JSON that
// json.Marshal would not write: spaces in raw offsets, empty lists and maps,
// unknown fields, keys in another case, null, a lone surrogate.
func nonCanonicalEvents() [][]byte {
	var out [][]byte
	for _, details := range []string{
		`{"batch_planned":{"start": {"a": [1, 2]}, "end":"<&>"}}`,
		`{"dataset_definition":{"table_properties":{},"expectations":[],"schema":{"fields":[]}}}`,
		`{"CREATE_UPDATE":{"cause":"x","unknown":1},"other":[]}`,
		`null`,
		`{"flow_progress":{"metrics":null,"data_quality":{"expectations":[]}}}`,
		`{"checkpoint_imported":{"offset":null}}`,
		`{"hook_progress":{"event_seq":18446744073709551615,"status":"\ud800"}}`,
	} {
		out = append(out, rawEvent(details))
	}
	return out
}

// nonCanonicalBatches are valid batch encodings EncodeBatch would not write:
// bits set past the last row, a value under a NULL, lists mixing kinds, a
// schema with unknown fields.
func nonCanonicalBatches(t testing.TB) [][]byte {
	one := func(typ Type) Schema { return NewSchema(Field{Name: "c", Type: typ, Nullable: true}) }
	schema := `{"fields":[{"name":"a","type":{"kind":2,"fields":[]},"extra":1}],"x":2}`
	return [][]byte{
		rawBatch(t, one(TypeInt64), 2, 1, 0xfe, 0, 10),
		rawBatch(t, one(TypeString), 1, 1, 1, 3, 'a', 'b', 'c'),
		rawBatch(t, one(ListOf(TypeInt64)), 1, 0, byte(KindList), 3, byte(KindString), 1, 'x', byte(KindBool), 1, byte(KindList), 0),
		append(append([]byte{1, byte(len(schema))}, schema...), 1, 0, 4),
		rawBatch(t, Schema{}, 3),
	}
}

// TestDecodeNonCanonical checks that the non-canonical seeds decode, so that
// the fuzzers start from inputs that reach the round trip.
func TestDecodeNonCanonical(t *testing.T) {
	for i, p := range nonCanonicalEvents() {
		if _, err := DecodeEvent(1, p); err != nil {
			t.Errorf("event %d: %v", i, err)
		}
	}
	for i, p := range nonCanonicalBatches(t) {
		if _, err := DecodeBatch(p); err != nil {
			t.Errorf("batch %d: %v", i, err)
		}
	}
}

// rawEvent is an event encoding with the given details JSON and nothing else.
func rawEvent(details string) []byte {
	p := []byte{1, 0} // version 1 (no checksum), ID
	p = binary.AppendVarint(p, eventTime.UnixNano())
	p = append(p, 0, 0, 0, 0, 0, 0, 0, 0) // type, level, message, origin's 4 names, no batch id
	p = binary.AppendUvarint(p, uint64(len(details)))
	p = append(p, details...)
	return append(p, 0, 0) // no error, no data
}

// isRawJSON picks the json.RawMessage fields (not Event.Data, also bytes).
func isRawJSON(p cmp.Path) bool { return p.Last().Type() == reflect.TypeFor[json.RawMessage]() }

// notBothEmpty leaves two empty messages to EquateEmpty.
func notBothEmpty(a, b json.RawMessage) bool { return len(a) > 0 || len(b) > 0 }

func FuzzDecodeEvent(f *testing.F) {
	events, _ := sampleEncodings(f)
	for _, p := range events {
		f.Add(p)
	}
	golden, err := EncodeEvent(goldenEvent(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add([]byte{})
	f.Add([]byte{1})
	for _, p := range nonCanonicalEvents() {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var ev *Event
		var err error
		if n := bytesAllocated(func() { ev, err = DecodeEvent(7, p) }); n > allocBound(len(p)) {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(p), n)
		}
		if err != nil {
			if c := CodeOf(err); c != CodeEventCodec && c != CodeStoreCorrupt {
				t.Fatalf("error %q has code %q", err, CodeOf(err))
			}
			return
		}
		p2, err := EncodeEvent(ev)
		if err != nil {
			t.Fatalf("a decoded event does not encode: %v", err)
		}
		ev2, err := DecodeEvent(7, p2)
		if err != nil {
			t.Fatalf("a re-encoded event does not decode: %v", err)
		}
		if diff := cmp.Diff(ev, ev2, eventOpts); diff != "" {
			t.Fatalf("round trip changes the event (-first +second):\n%s", diff)
		}
		p3, err := EncodeEvent(ev2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p2, p3) {
			t.Fatalf("encoding is not stable after a round trip:\n%x\n%x", p2, p3)
		}
	})
}

func FuzzDecodeBatch(f *testing.F) {
	_, batches := sampleEncodings(f)
	for _, p := range batches {
		f.Add(p)
	}
	golden, err := EncodeBatch(goldenBatch(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add([]byte{})
	f.Add([]byte{1, 2, '{', '}', 0})
	for _, p := range nonCanonicalBatches(f) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var b *Batch
		var err error
		if n := bytesAllocated(func() { b, err = DecodeBatch(p) }); n > allocBound(len(p)) {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(p), n)
		}
		if err != nil {
			if c := CodeOf(err); c != CodeBatchCodec && c != CodeStoreCorrupt {
				t.Fatalf("error %q has code %q", err, CodeOf(err))
			}
			return
		}
		p2, err := EncodeBatch(b)
		if err != nil {
			t.Fatalf("a decoded batch does not encode: %v", err)
		}
		b2, err := DecodeBatch(p2)
		if err != nil {
			t.Fatalf("a re-encoded batch does not decode: %v", err)
		}
		if diff := batchDiff(b, b2); diff != "" {
			t.Fatalf("round trip changes the batch: %s", diff)
		}
		p3, err := EncodeBatch(b2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p2, p3) {
			t.Fatalf("encoding is not stable after a round trip:\n%x\n%x", p2, p3)
		}
	})
}
