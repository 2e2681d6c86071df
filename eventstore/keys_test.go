package eventstore

import (
	"bytes"
	"testing"
)

// TestKeyLayout pins the keyspace: other tools read these bytes.
func TestKeyLayout(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want []byte
		desc string
	}{
		{"log", logKey(0x0102), []byte{'L', 0, 0, 0, 0, 0, 0, 0x01, 0x02}, "L 258"},
		{"flow index", indexKey(indexFlow, "orders", 7), append([]byte("IForders\x00"), 0, 0, 0, 0, 0, 0, 0, 7), "I F orders 7"},
		{"dataset index", indexKey(indexDataset, "d", 1<<56), append([]byte("IDd\x00"), 1, 0, 0, 0, 0, 0, 0, 0), "I D d 72057594037927936"},
		{"update index", indexKey(indexUpdate, "u-1", 2), append([]byte("IUu-1\x00"), 0, 0, 0, 0, 0, 0, 0, 2), "I U u-1 2"},
		{"type index", indexKey(indexType, "flow_progress", 3), append([]byte("ITflow_progress\x00"), 0, 0, 0, 0, 0, 0, 0, 3), "I T flow_progress 3"},
		{"projection", projectionKey("state", []byte("ckpt/orders")), []byte("Pstate\x00ckpt/orders"), "P state ckpt/orders"},
		{"projection, odd key", projectionKey("c", []byte{0, 'x'}), []byte("Pc\x00\x00x"), `P c "\x00x"`},
		{"format", metaFormatKey, []byte("Mformat"), "M format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Equal(tc.got, tc.want) {
				t.Errorf("key = %q, want %q", tc.got, tc.want)
			}
			if d := describeKey(tc.got); d != tc.desc {
				t.Errorf("describeKey = %q, want %q", d, tc.desc)
			}
		})
	}
	// Numeric order is byte order.
	if bytes.Compare(logKey(255), logKey(256)) >= 0 || bytes.Compare(indexKey(indexFlow, "a", 255), indexKey(indexFlow, "a", 256)) >= 0 {
		t.Error("big-endian order broken")
	}
	// One name's entries never interleave with a longer name's.
	if bytes.HasPrefix(indexKey(indexFlow, "ab", 1), indexPrefix(indexFlow, "a")) {
		t.Error("the prefix of flow a matches flow ab")
	}
}

// FuzzDescribeKey: describing any key never panics and says something.
func FuzzDescribeKey(f *testing.F) {
	for _, k := range [][]byte{nil, {'L'}, logKey(9), indexKey(indexFlow, "f", 1), {'I', 'F', 0}, []byte("P"), []byte("Px\x00"), []byte("M")} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k []byte) {
		if describeKey(k) == "" {
			t.Errorf("describeKey(%q) is empty", k)
		}
	})
}
