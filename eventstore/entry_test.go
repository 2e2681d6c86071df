package eventstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/sluicehq/sluice/domain"
)

// TestEntryForms stores events small and large, compressible and not, and
// reads each back through the log; a large compressible event is stored
// compressed, in one block or, from two block sizes on, in several, the
// others as they are; an entry from the value threshold up is stored in a
// segment file, Badger holding a pointer to it.
func TestEntryForms(t *testing.T) {
	row := `{"session_id":"s3c6ef362","click_ts":"2025-01-01T00:00:00.014Z"}`
	rows := []byte(strings.Repeat(row, 1000))
	var many []byte // 5.3 MB, each row its own: six blocks
	for i := range 80_000 {
		many = fmt.Appendf(many, `{"session_id":"s%08d","click_ts":"2025-01-01T00:00:00.014Z"}`, i)
	}
	tests := []struct {
		name string
		data []byte
		form byte // the entry's first byte; 0 for an event stored as it is
	}{
		{"no data", nil, 0},
		{"small", []byte("a few bytes"), 0},
		{"compressible", rows, entryCompressed},
		{"just under two blocks", []byte(strings.Repeat(row, (2*entryBlockSize-4096)/len(row))), entryCompressed},
		{"blocks", many, entryBlocks},
		{"random", bigEvent("f", 64<<10).Data, 0},
		{"random blocks", bigEvent("f", 3<<20).Data, 0},
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
			_, pointed := decodePointer(stored)
			if stored, err = s.segs.entry(seq, stored); err != nil {
				t.Fatal(err)
			}
			if want := int64(len(stored)) >= s.segs.threshold; pointed != want {
				t.Errorf("an entry of %d bytes stored in a segment: %v, want %v (from %d bytes)", len(stored), pointed, want, s.segs.threshold)
			}
			form := stored[0]
			if !compressed(stored) {
				form = 0
			}
			if form != tc.form {
				t.Errorf("stored in form %#x (%d bytes for %d of data), want %#x", form, len(stored), len(tc.data), tc.form)
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

// TestDamagedCompressedEntry flips bytes of compressed log entries, in one
// block and in several: reading them is STORE_CORRUPT, never an event with
// other data.
func TestDamagedCompressedEntry(t *testing.T) {
	for _, size := range []int{16 << 10, 3 << 20} {
		e := ev(domain.EventSinkBatchDelivered, "f", "", "", "")
		e.Details.SinkBatchDelivered = &domain.SinkBatchDelivered{Flow: "f"}
		for i := 0; len(e.Data) < size; i++ {
			e.Data = fmt.Appendf(e.Data, "row %d,", i)
		}
		e.Timestamp = time.Unix(1e9, 0)
		p, err := domain.EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		entry := entryOf(nil, p)
		if !compressed(entry) {
			t.Fatal("the entry is not compressed")
		}
		for _, at := range []int{1, 2, 3, len(entry) / 2, len(entry) - 1} {
			bad := bytes.Clone(entry)
			bad[at] ^= 0x55
			if _, err := decodeStored(7, bad); domain.CodeOf(err) != domain.CodeStoreCorrupt {
				t.Errorf("%d bytes, byte %d flipped: got %v, want STORE_CORRUPT", size, at, err)
			}
		}
		if _, err := decodeStored(7, entry[:len(entry)/2]); domain.CodeOf(err) != domain.CodeStoreCorrupt {
			t.Errorf("%d bytes, cut short: got %v, want STORE_CORRUPT", size, err)
		}
	}
}

// TestBlocksClaimingMuch: an entry of tiny blocks that each claim a whole
// block's bytes is refused having allocated a few blocks' worth, not what
// the blocks claim (a gigabyte here).
func TestBlocksClaimingMuch(t *testing.T) {
	const n = 1000
	v := []byte{entryBlocks}
	v = binary.AppendUvarint(v, n)
	block := binary.AppendUvarint(nil, entryBlockSize) // claims 1 MiB
	block = append(block, 0xff)                        // and holds no valid op
	for range n {
		v = binary.AppendUvarint(v, uint64(len(block)))
	}
	for range n {
		v = append(v, block...)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decodeStored(9, v)
	runtime.ReadMemStats(&after)
	if domain.CodeOf(err) != domain.CodeStoreCorrupt {
		t.Errorf("got %v, want STORE_CORRUPT", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("%d MiB allocated to find a %d-byte entry damaged", got>>20, len(v))
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
	f.Add(entryOf(nil, p))
	f.Add([]byte{entryCompressed})
	f.Add([]byte{entryCompressed, 0}) // an empty block: no event at all
	f.Add([]byte{entryBlocks, 2, 1, 1, 0, 0})
	f.Add([]byte{entryBlocks, 1, 5, 0x80, 0x80, 0x80, 0x80, 0x04}) // a block claiming 1 GiB
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
