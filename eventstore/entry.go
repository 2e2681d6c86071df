package eventstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"
	"github.com/sluicehq/sluice/domain"
)

// A log entry is an event in domain's codec, stored as it is or, when that
// saves space, compressed: the byte entryCompressed, then the encoding as
// one S2 block; or, for an event of two entryBlockSize or more, the byte
// entryBlocks, the number of blocks and each one's length (uvarints), then
// the encoding cut into entryBlockSize pieces, each an S2 block, so that
// the pieces are compressed, and read back, on every core at once. Events
// that carry rows compress two to four times, which cuts what a commit
// writes and syncs, and what a scan reads back, by as much; S2 is chosen
// for its speed (it compresses at hundreds of MB/s a core and decompresses
// at several times that). The event codec's own checksum, inside the
// blocks, is checked after decompressing, so damage to either layer is
// found.
const (
	entryCompressed = 0xC5 // never an event codec version
	entryBlocks     = 0xC6
	compressAtLeast = 4 << 10
	entryBlockSize  = 1 << 20
)

// entryOf is the log entry storing the encoded event p, in buf's space
// when it is compressed.
func entryOf(buf, p []byte) []byte {
	if len(p) < compressAtLeast {
		return p
	}
	var c []byte
	if len(p) < 2*entryBlockSize {
		c = slices.Grow(buf[:0], 1+s2.MaxEncodedLen(len(p)))[:1+s2.MaxEncodedLen(len(p))]
		c[0] = entryCompressed
		c = c[:1+len(s2.Encode(c[1:], p))]
	} else {
		c = compressBlocks(buf, p)
	}
	if len(c) >= len(p)-len(p)/8 { // not worth a decompression on every read
		return p
	}
	return c
}

// compressed tells a compressed entry from an event stored as it is.
func compressed(entry []byte) bool {
	return len(entry) > 0 && (entry[0] == entryCompressed || entry[0] == entryBlocks)
}

// compressBlocks is the entryBlocks entry of p: each piece is compressed
// into a slot of its own, on every core, then the blocks are moved
// together behind the header.
func compressBlocks(buf, p []byte) []byte {
	n := (len(p) + entryBlockSize - 1) / entryBlockSize
	head := 1 + binary.MaxVarintLen64*(n+1)
	slot := s2.MaxEncodedLen(entryBlockSize)
	c := slices.Grow(buf[:0], head+n*slot)[:head+n*slot]
	sizes := make([]int, n)
	eachBlock(n, func(i int) {
		piece := p[i*entryBlockSize : min(len(p), (i+1)*entryBlockSize)]
		sizes[i] = len(s2.Encode(c[head+i*slot:], piece))
	})
	out := append(c[:0], entryBlocks)
	out = binary.AppendUvarint(out, uint64(n))
	for _, size := range sizes {
		out = binary.AppendUvarint(out, uint64(size))
	}
	for i, size := range sizes { // out never reaches a slot not yet moved
		out = append(out, c[head+i*slot:head+i*slot+size]...)
	}
	return out
}

// decompressBlocks is the encoding an entryBlocks entry holds (v without
// its first byte). Every block but the last gives entryBlockSize bytes, the
// last at most as many. Blocks are decoded into buffers of their own, and
// the first that fails stops the rest, so that a damaged entry is found
// having allocated a few blocks' worth, however many blocks it claims;
// the buffers are joined once all decoded.
func decompressBlocks(v []byte) ([]byte, error) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n == 0 || n > uint64(len(v)/2) { // a block takes two bytes at least
		return nil, errors.New("bad block count")
	}
	v = v[k:]
	sizes := make([]int, n)
	for i := range sizes {
		size, k := binary.Uvarint(v)
		if k <= 0 || size > uint64(len(v)) {
			return nil, errors.New("bad block length")
		}
		sizes[i], v = int(size), v[k:]
	}
	blocks := make([][]byte, n)
	total := 0
	for i, size := range sizes {
		if size > len(v) {
			return nil, errors.New("a block is cut short")
		}
		blocks[i], v = v[:size:size], v[size:]
		dl, err := s2.DecodedLen(blocks[i])
		if err != nil {
			return nil, err
		}
		if dl > entryBlockSize || i < len(sizes)-1 && dl != entryBlockSize {
			return nil, errors.New("a block of the wrong size")
		}
		total += dl
	}
	if len(v) > 0 {
		return nil, fmt.Errorf("%d trailing bytes", len(v))
	}
	decoded := make([][]byte, n)
	var failed atomic.Bool
	errs := make([]error, n)
	eachBlock(int(n), func(i int) {
		if failed.Load() {
			return
		}
		decoded[i], errs[i] = s2.Decode(nil, blocks[i])
		if errs[i] != nil {
			failed.Store(true)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	p := make([]byte, 0, total)
	for _, d := range decoded {
		p = append(p, d...)
	}
	return p, nil
}

// eachBlock calls do for 0..n-1, on as many goroutines as there are cores.
func eachBlock(n int, do func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		})
	}
	wg.Wait()
}

// decodeStored decodes the log entry of event seq. Badger hands back an empty
// or short value, and only logs why, when the value log cannot give it: a
// stored event that does not decode is damage (STORE_CORRUPT), unless it was
// written in a codec version this sluice does not read.
func decodeStored(seq uint64, v []byte) (*domain.Event, error) {
	if compressed(v) {
		var p []byte
		var err error
		if v[0] == entryCompressed {
			p, err = s2.Decode(nil, v[1:])
		} else {
			p, err = decompressBlocks(v[1:])
		}
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

// Encoding buffers of large events are reused from one commit to the
// next: a batch of rows is megabytes, and fresh memory of that size costs
// more to fault in and clear than the copy into it. Only buffers of
// reuseAtLeast or more are kept, and the pool lets the garbage collector
// take them when commits stop.
const reuseAtLeast = 64 << 10

var entryBuffers sync.Pool // of *[]byte

func getBuffer() []byte {
	if b, ok := entryBuffers.Get().(*[]byte); ok {
		return *b
	}
	return nil
}

func putBuffer(b []byte) {
	if cap(b) >= reuseAtLeast {
		entryBuffers.Put(&b)
	}
}
