package eventstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// The keyspace. One prefix byte per space; integers are big-endian so that
// byte order is numeric order.
//
//	'L' seq(8)                           -> domain.EncodeEvent(event)   the log
//	'I' kind name 0x00 seq(8)            -> empty                       the indexes
//	'P' projector 0x00 key               -> projector-defined           the projections
//	'M' name                             -> metadata                    format version, rebuild marker
const (
	prefixLog        = 'L'
	prefixIndex      = 'I'
	prefixProjection = 'P'
	prefixMeta       = 'M'
)

// Index kinds: the byte after 'I'.
const (
	indexFlow    = 'F' // origin.flow_name
	indexDataset = 'D' // origin.dataset_name
	indexUpdate  = 'U' // origin.update_id
	indexType    = 'T' // event_type
)

// formatVersion is the version of the storage layout written under
// metaFormatKey. Version 2 added compressed log entries, version 3 entries
// compressed in blocks (see entry.go), version 4 large entries in segment
// files (see segments.go), version 5 batches stored as selections of
// another table's rows (domain.Selection), which an older sluice would
// neither read nor keep from its vacuum, version 6 snapshots of a flow's
// stream state (domain.StreamState), which an older sluice would fold as
// identities newly remembered, version 7 stream states whose identities
// vacuum removed (IdentitiesRemoved), which an older sluice would fold as
// remembering none, and so find every later state false, version 8
// snapshots of a stream state in parts (SnapshotPart), which an older
// sluice would fold each as the whole state, and state fingerprints of
// another hash ("2-"), which it would find false, version 9 stream states
// holding a selection of rows rather than identities (IdentitiesOf),
// which an older sluice would neither read nor keep from its vacuum; Open
// reads the versions before too, and raises an older store it may write
// to to 9, since an older sluice cannot read the entries written from then
// on. It refuses any other version.
const formatVersion = 9

var (
	metaFormatKey  = []byte{prefixMeta, 'f', 'o', 'r', 'm', 'a', 't'}
	metaRebuildKey = []byte{prefixMeta, 'r', 'e', 'b', 'u', 'i', 'l', 'd'}
	// metaReclaimKey holds when Reclaim last ran (RFC 3339).
	metaReclaimKey = []byte{prefixMeta, 'r', 'e', 'c', 'l', 'a', 'i', 'm'}
)

// maxNameLen bounds the names that go into index keys (flow, dataset, update
// id, event type) and projector names, far below Badger's 65000-byte key limit.
const maxNameLen = 4096

func logKey(seq uint64) []byte {
	k := make([]byte, 9)
	k[0] = prefixLog
	binary.BigEndian.PutUint64(k[1:], seq)
	return k
}

// seqOfLogKey returns the seq of a log key; ok is false for a malformed key.
func seqOfLogKey(k []byte) (uint64, bool) {
	if len(k) != 9 || k[0] != prefixLog {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// indexPrefix is 'I' kind name 0x00: every entry of one index value.
func indexPrefix(kind byte, name string) []byte {
	k := make([]byte, 0, 3+len(name)+8)
	k = append(k, prefixIndex, kind)
	k = append(k, name...)
	return append(k, 0)
}

func indexKey(kind byte, name string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(indexPrefix(kind, name), seq)
}

// projectionPrefix is 'P' name 0x00: every key of one projector.
func projectionPrefix(projector string) []byte {
	k := make([]byte, 0, 2+len(projector))
	k = append(k, prefixProjection)
	k = append(k, projector...)
	return append(k, 0)
}

func projectionKey(projector string, key []byte) []byte {
	p := projectionPrefix(projector)
	out := make([]byte, len(p)+len(key))
	copy(out, p)
	copy(out[len(p):], key)
	return out
}

// describeKey renders a key for error messages and logs: "L 42",
// "I F orders 42", "P state ckpt/orders".
func describeKey(k []byte) string {
	if len(k) == 0 {
		return `""`
	}
	switch k[0] {
	case prefixLog:
		if seq, ok := seqOfLogKey(k); ok {
			return "L " + strconv.FormatUint(seq, 10)
		}
	case prefixIndex:
		if len(k) >= 2+1+8 && k[len(k)-9] == 0 {
			name := k[2 : len(k)-9]
			seq := binary.BigEndian.Uint64(k[len(k)-8:])
			return fmt.Sprintf("I %c %s %d", k[1], printable(name), seq)
		}
	case prefixProjection:
		if i := bytes.IndexByte(k[1:], 0); i >= 0 {
			return fmt.Sprintf("P %s %s", printable(k[1:1+i]), printable(k[2+i:]))
		}
	case prefixMeta:
		return "M " + printable(k[1:])
	}
	return printable(k)
}

// printable returns b as is when it is printable ASCII without spaces, quoted
// otherwise.
func printable(b []byte) string {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f {
			return strconv.Quote(string(b))
		}
	}
	return string(b)
}

// validName reports why s cannot be used in a key, or "" when it can.
func validName(s string) string {
	switch {
	case len(s) > maxNameLen:
		return fmt.Sprintf("is %d bytes long; at most %d are allowed", len(s), maxNameLen)
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL byte"
	}
	return ""
}
