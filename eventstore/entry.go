package eventstore

import (
	"fmt"

	"github.com/klauspost/compress/s2"
	"github.com/sluicehq/sluice/domain"
)

// A log entry is an event in domain's codec, stored as it is or, when that
// saves space, compressed: the byte entryCompressed, then the encoding as
// one S2 block. Events that carry rows compress two to four times, which
// cuts what a commit writes and syncs, and what a scan reads back, by as
// much; S2 is chosen for its speed (it compresses at hundreds of MB/s a
// core and decompresses at several times that). The event codec's own
// checksum, inside the block, is checked after decompressing, so damage to
// either layer is found.
const (
	entryCompressed = 0xC5 // never an event codec version
	compressAtLeast = 4 << 10
)

// entryOf is the log entry storing the encoded event p.
func entryOf(p []byte) []byte {
	if len(p) < compressAtLeast {
		return p
	}
	c := make([]byte, 1+s2.MaxEncodedLen(len(p)))
	c[0] = entryCompressed
	n := len(s2.Encode(c[1:], p))
	if 1+n >= len(p)-len(p)/8 { // not worth a decompression on every read
		return p
	}
	return c[:1+n]
}

// decodeStored decodes the log entry of event seq. Badger hands back an empty
// or short value, and only logs why, when the value log cannot give it: a
// stored event that does not decode is damage (STORE_CORRUPT), unless it was
// written in a codec version this sluice does not read.
func decodeStored(seq uint64, v []byte) (*domain.Event, error) {
	if len(v) > 0 && v[0] == entryCompressed {
		p, err := s2.Decode(nil, v[1:])
		if err != nil {
			return nil, damagedEntry(seq, v, err)
		}
		ev, err := domain.DecodeEventShared(seq, p) // p is this event's own
		if err != nil && domain.CodeOf(err) == domain.CodeEventCodec && (len(p) == 0 || p[0] <= 2) {
			return nil, damagedEntry(seq, v, err)
		}
		return ev, err
	}
	ev, err := domain.DecodeEvent(seq, v)
	if err == nil || domain.CodeOf(err) != domain.CodeEventCodec || (len(v) > 0 && v[0] > 2) {
		return ev, err
	}
	return nil, damagedEntry(seq, v, err)
}

func damagedEntry(seq uint64, v []byte, err error) error {
	return domain.Wrap(domain.CodeStoreCorrupt, err, fmt.Sprintf("event %d of the log cannot be read (%d bytes): the storage is damaged", seq, len(v))).
		WithHint("nothing was changed; restore the storage directory from a backup, or run `sluice doctor` to see every damaged file")
}
