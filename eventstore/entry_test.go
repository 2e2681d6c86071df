package eventstore

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/sluicehq/sluice/domain"
)

// TestEntryForms stores events small and large, compressible and not, and
// reads each back through the log; a large compressible event is stored
// compressed, the others as they are.
func TestEntryForms(t *testing.T) {
	rows := []byte(strings.Repeat(`{"session_id":"s3c6ef362","click_ts":"2025-01-01T00:00:00.014Z"}`, 1000))
	tests := []struct {
		name       string
		data       []byte
		compressed bool
	}{
		{"no data", nil, false},
		{"small", []byte("a few bytes"), false},
		{"compressible", rows, true},
		{"random", bigEvent("f", 64<<10).Data, false},
	}
	s := openTest(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := ev(domain.EventSinkBatchDelivered, "f", "", "", tc.name)
			e.Details.SinkBatchDelivered = &domain.SinkBatchDelivered{Flow: "f"}
			e.Data = tc.data
			seq := mustAppend(t, s, e)[0]
			var stored []byte
			err := s.db.View(func(txn *badger.Txn) error {
				item, err := txn.Get(logKey(seq))
				if err == nil {
					stored, err = item.ValueCopy(nil)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := stored[0] == entryCompressed; got != tc.compressed {
				t.Errorf("stored compressed = %v (%d bytes for %d of data), want %v", got, len(stored), len(tc.data), tc.compressed)
			}
			back, err := s.Get(seq)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Data, tc.data) || back.Message != tc.name {
				t.Errorf("read back %q with %d bytes of data, want %q with %d", back.Message, len(back.Data), tc.name, len(tc.data))
			}
		})
	}
}

// TestDamagedCompressedEntry flips bytes of a compressed log entry: reading
// it is STORE_CORRUPT, never an event with other data.
func TestDamagedCompressedEntry(t *testing.T) {
	e := ev(domain.EventSinkBatchDelivered, "f", "", "", "")
	e.Details.SinkBatchDelivered = &domain.SinkBatchDelivered{Flow: "f"}
	e.Data = []byte(strings.Repeat("0123456789abcdef", 1024))
	e.Timestamp = time.Unix(1e9, 0)
	p, err := domain.EncodeEvent(e)
	if err != nil {
		t.Fatal(err)
	}
	entry := entryOf(p)
	if entry[0] != entryCompressed {
		t.Fatal("the entry is not compressed")
	}
	for _, at := range []int{1, 2, len(entry) / 2, len(entry) - 1} {
		bad := bytes.Clone(entry)
		bad[at] ^= 0x55
		if _, err := decodeStored(7, bad); domain.CodeOf(err) != domain.CodeStoreCorrupt {
			t.Errorf("byte %d flipped: got %v, want STORE_CORRUPT", at, err)
		}
	}
	if _, err := decodeStored(7, entry[:len(entry)/2]); domain.CodeOf(err) != domain.CodeStoreCorrupt {
		t.Errorf("cut short: got %v, want STORE_CORRUPT", err)
	}
}

// FuzzDecodeStored feeds arbitrary log entries to the decoder: it returns an
// event or a coded error, and never panics.
func FuzzDecodeStored(f *testing.F) {
	e := ev(domain.EventFlowProgress, "f", "d", "u", "m")
	e.Data = []byte(strings.Repeat("row", 3000))
	e.Timestamp = time.Unix(1e9, 0)
	p, err := domain.EncodeEvent(e)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p)
	f.Add(entryOf(p))
	f.Add([]byte{entryCompressed})
	f.Add([]byte{entryCompressed, 0}) // an empty block: no event at all
	f.Fuzz(func(t *testing.T, v []byte) {
		ev, err := decodeStored(1, v)
		if err == nil && ev == nil {
			t.Fatal("no event and no error")
		}
		if err != nil && domain.CodeOf(err) == "" {
			t.Fatalf("uncoded error: %v", err)
		}
	})
}
