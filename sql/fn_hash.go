package sql

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"math"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"md5":           {minArgs: 1, maxArgs: 1, compile: compileDigest},
		"sha1":          {minArgs: 1, maxArgs: 1, compile: compileDigest},
		"sha":           {minArgs: 1, maxArgs: 1, compile: compileDigest},
		"sha2":          {minArgs: 2, maxArgs: 2, compile: compileSha2},
		"crc32":         {minArgs: 1, maxArgs: 1, compile: compileCrc32},
		"hash":          {minArgs: 1, maxArgs: -1, compile: compileHash},
		"xxhash64":      {minArgs: 1, maxArgs: -1, compile: compileHash},
		"base64":        {minArgs: 1, maxArgs: 1, compile: compileBase64},
		"unbase64":      {minArgs: 1, maxArgs: 1, compile: compileUnbase64},
		"hex":           {minArgs: 1, maxArgs: 1, compile: compileHex},
		"unhex":         {minArgs: 1, maxArgs: 1, compile: compileUnhex},
		"to_binary":     {minArgs: 1, maxArgs: 2, compile: compileToBinary},
		"try_to_binary": {minArgs: 1, maxArgs: 2, compile: compileToBinary},
		"uuid":          {minArgs: 0, maxArgs: 0, compile: compileUUID},
	})
}

// bytesArg compiles argument i as binary: a binary stays binary, anything
// castable to string is its UTF-8 bytes (both live in Strs).
func (c *compiler) bytesArg(e *syntax.FuncCall, i int, name string) (node, error) {
	x, err := c.compile(e.Args[i])
	if err != nil {
		return nil, err
	}
	if x.typ().Kind == domain.KindBytes {
		return x, nil
	}
	return asString(x, e.Args[i].Position(), name)
}

// bytesFunc is a function of one binary (or string) argument.
func (c *compiler) bytesFunc(e *syntax.FuncCall, name string, t domain.Type, f func(out *domain.Column, b string, i int) error) (node, error) {
	x, err := c.bytesArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x}, t: t, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		return f(out, a[0].Strs[i], i)
	})}, nil
}

// compileDigest: md5, sha1 and sha as lower-case hex strings.
func compileDigest(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	return c.bytesFunc(e, name, domain.TypeString, func(out *domain.Column, b string, i int) error {
		if name == "md5" {
			sum := md5.Sum([]byte(b))
			out.Strs[i] = hex.EncodeToString(sum[:])
		} else {
			sum := sha1.Sum([]byte(b))
			out.Strs[i] = hex.EncodeToString(sum[:])
		}
		return nil
	})
}

// compileSha2: sha2(x, bits) for bits 224, 256 (or 0), 384 and 512; other
// bit lengths give NULL, as in Spark.
func compileSha2(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.bytesArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	bits, err := c.compile(e.Args[1])
	if err != nil {
		return nil, err
	}
	if bits, err = asInt(bits, e.Args[1].Position(), name); err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x, bits}, t: domain.TypeString, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		b := []byte(a[0].Strs[i])
		var sum []byte
		switch a[1].Ints[i] {
		case 224:
			s := sha256.Sum224(b)
			sum = s[:]
		case 0, 256:
			s := sha256.Sum256(b)
			sum = s[:]
		case 384:
			s := sha512.Sum384(b)
			sum = s[:]
		case 512:
			s := sha512.Sum512(b)
			sum = s[:]
		default:
			setNull(out, i)
			return nil
		}
		out.Strs[i] = hex.EncodeToString(sum)
		return nil
	})}, nil
}

func compileCrc32(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	return c.bytesFunc(e, name, domain.TypeInt64, func(out *domain.Column, b string, i int) error {
		out.Ints[i] = int64(crc32.ChecksumIEEE([]byte(b)))
		return nil
	})
}

// compileBase64: base64(x) without line breaks (Spark's default).
func compileBase64(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	return c.bytesFunc(e, name, domain.TypeString, func(out *domain.Column, b string, i int) error {
		out.Strs[i] = base64.StdEncoding.EncodeToString([]byte(b))
		return nil
	})
}

// compileUnbase64: unbase64(s) decodes as Java's MIME decoder, which Spark
// uses: characters outside the alphabet are skipped, padding is optional
// and ends the data. A last group of a single character cannot be decoded:
// CAST_INVALID_INPUT.
func compileUnbase64(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if x, err = asString(x, e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	pos := e.Pos
	return &fnNode{args: []node{x}, t: domain.TypeBytes, fails: true, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		s := a[0].Strs[i]
		var clean strings.Builder
		for k := 0; k < len(s); k++ {
			ch := s[k]
			if ch == '=' {
				break
			}
			if ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '+' || ch == '/' {
				clean.WriteByte(ch)
			}
		}
		b, err := base64.RawStdEncoding.DecodeString(clean.String())
		if err != nil {
			return exprErr(domain.CodeCastInvalidInput, pos, "unbase64('%s'): the value is not valid base64", s)
		}
		out.Strs[i] = string(b)
		return nil
	})}, nil
}

// compileHex: hex of a bigint is its two's complement in upper-case
// hexadecimal (hex(-1) is FFFFFFFFFFFFFFFF); of a string or binary, its
// bytes.
func compileHex(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if x.typ().Kind == domain.KindInt64 {
		return &fnNode{args: []node{x}, t: domain.TypeString, body: func(out *domain.Column, a []*domain.Column) error {
			for i, v := range a[0].Ints {
				out.Strs[i] = strings.ToUpper(strconv.FormatUint(uint64(v), 16))
			}
			return nil
		}}, nil
	}
	if k := x.typ().Kind; k != domain.KindString && k != domain.KindBytes && k != domain.KindNull {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a bigint, a string or a binary, found %s", name, x.typ())
	}
	return c.bytesFunc(e, name, domain.TypeString, func(out *domain.Column, b string, i int) error {
		out.Strs[i] = strings.ToUpper(hex.EncodeToString([]byte(b)))
		return nil
	})
}

// compileUnhex: unhex(s) is the binary of hexadecimal digits (an odd count
// has an implied leading 0); NULL when s has other characters, as in Spark.
func compileUnhex(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	if x, err = asString(x, e.Args[0].Position(), name); err != nil {
		return nil, err
	}
	return &fnNode{args: []node{x}, t: domain.TypeBytes, body: strBody(func(out *domain.Column, a []*domain.Column, i int) error {
		s := a[0].Strs[i]
		if len(s)%2 != 0 {
			s = "0" + s
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			setNull(out, i)
			return nil
		}
		out.Strs[i] = string(b)
		return nil
	})}, nil
}

// uuidNode is uuid(): a random (version 4) UUID per row.
type uuidNode struct{}

func compileUUID(*compiler, *syntax.FuncCall, string) (node, error) { return uuidNode{}, nil }

func (uuidNode) typ() domain.Type { return domain.TypeString }
func (uuidNode) mayFail() bool    { return false }
func (uuidNode) eval(b *domain.Batch) (*domain.Column, error) {
	out := newCol(domain.KindString, b.Len())
	buf := make([]byte, 16*len(out.Strs))
	_, _ = rand.Read(buf) // crypto/rand.Read never fails
	for i := range out.Strs {
		u := buf[16*i : 16*i+16]
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // variant 10
		h := hex.EncodeToString(u)
		out.Strs[i] = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	return out, nil
}

// ---- hash and xxhash64 ----

// hashNode is hash(...) (Spark's Murmur3 x86_32) and xxhash64(...) (XXH64),
// both seeded with 42 and folded over the arguments: each argument is hashed
// with the hash so far as its seed; NULLs leave the hash as it is. Values
// are hashed as Spark hashes their types: bigint and timestamp as a long,
// boolean and date as an int, double as the long of its bits (-0.0 as 0.0,
// every NaN as one NaN), string and binary as their bytes, arrays and
// structs element by element. Spark hashes an INT (its integer literals are
// INT) as an int; sluice's integers are all bigint, so hash(2) equals
// Spark's hash(2L), not hash(2).
type hashNode struct {
	args []node
	xx   bool
}

func compileHash(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.args(e)
	if err != nil {
		return nil, err
	}
	return &hashNode{args: args, xx: name == "xxhash64"}, nil
}

func (n *hashNode) typ() domain.Type {
	if n.xx {
		return domain.TypeInt64
	}
	return domain.TypeInt32 // Spark's hash is an INT
}
func (n *hashNode) mayFail() bool { return anyMayFail(n.args) }

func (n *hashNode) eval(b *domain.Batch) (*domain.Column, error) {
	rows := b.Len()
	out := newCol(domain.KindInt64, rows)
	for i := range out.Ints {
		out.Ints[i] = 42
	}
	h := hasher{xx: n.xx}
	for _, a := range n.args {
		c, err := a.eval(b)
		if err != nil {
			return nil, err
		}
		seeds := out.Ints
		narrow := a.typ().Bits != 0 // INT, SMALLINT, TINYINT hash as ints, FLOAT by its float bits, as in Spark
		switch c.Kind {
		case domain.KindNull:
		case domain.KindInt64, domain.KindTimestamp:
			for i, v := range c.Ints {
				if !isNullAt(c.Nulls, i) {
					if narrow {
						seeds[i] = h.int(int32(v), seeds[i])
					} else {
						seeds[i] = h.long(v, seeds[i])
					}
				}
			}
		case domain.KindBool, domain.KindDate:
			for i, v := range c.Ints {
				if !isNullAt(c.Nulls, i) {
					seeds[i] = h.int(int32(v), seeds[i])
				}
			}
		case domain.KindFloat64:
			for i, v := range c.Floats {
				if !isNullAt(c.Nulls, i) {
					if narrow {
						seeds[i] = h.int(javaFloatBits(float32(v)), seeds[i])
					} else {
						seeds[i] = h.long(javaDoubleBits(v), seeds[i])
					}
				}
			}
		case domain.KindString, domain.KindBytes:
			for i, v := range c.Strs {
				if !isNullAt(c.Nulls, i) {
					seeds[i] = h.bytes(v, seeds[i])
				}
			}
		default:
			for i := range c.Values {
				if !c.IsNull(i) {
					seeds[i] = h.typed(c.Values[i], a.typ(), seeds[i])
				}
			}
		}
	}
	if !n.xx { // Spark's hash is an int
		for i, v := range out.Ints {
			out.Ints[i] = int64(int32(v))
		}
	}
	return out, nil
}

// javaFloatBits is Java's floatToIntBits of f with -0.0 as 0.0, as Spark
// hashes floats.
func javaFloatBits(f float32) int32 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return 0x7fc00000
	}
	return int32(math.Float32bits(f))
}

// javaDoubleBits is Java's doubleToLongBits of d with -0.0 as 0.0, as Spark
// hashes doubles.
func javaDoubleBits(d float64) int64 {
	switch {
	case d == 0:
		return 0
	case math.IsNaN(d):
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(d))
}

// hasher hashes one value with a seed, by Murmur3 x86_32 or XXH64; the
// Murmur3 seed and result are ints carried in an int64.
type hasher struct{ xx bool }

func (h hasher) int(v int32, seed int64) int64 {
	if h.xx {
		return int64(xxh64Int(uint32(v), uint64(seed)))
	}
	return int64(murmurInt(uint32(v), uint32(seed)))
}

func (h hasher) long(v int64, seed int64) int64 {
	if h.xx {
		return int64(xxh64Long(uint64(v), uint64(seed)))
	}
	return int64(murmurLong(uint64(v), uint32(seed)))
}

func (h hasher) bytes(s string, seed int64) int64 {
	if h.xx {
		return int64(xxh64(s, uint64(seed)))
	}
	return int64(murmurBytes(s, uint32(seed)))
}

func (h hasher) value(v domain.Value, seed int64) int64 {
	switch v.Kind() {
	case domain.KindNull:
		return seed
	case domain.KindInt64, domain.KindTimestamp:
		return h.long(v.AsInt(), seed)
	case domain.KindBool, domain.KindDate:
		return h.int(int32(v.AsInt()), seed)
	case domain.KindFloat64:
		return h.long(javaDoubleBits(v.AsFloat()), seed)
	case domain.KindString, domain.KindBytes:
		return h.bytes(v.AsString(), seed)
	case domain.KindDecimal:
		// as Spark: the unscaled value as a long up to 18 digits, beyond
		// as Java's BigInteger.toByteArray of it
		if v.Precision() <= 18 {
			return h.long(v.AsInt(), seed)
		}
		return h.bytes(javaBigIntegerBytes(v.AsDecimal()), seed)
	}
	for _, x := range v.AsList() { // lists and struct fields alike
		seed = h.value(x, seed)
	}
	return seed
}

// typed is value for v of type t, whose narrow integers and floats (which
// values do not know) hash as Spark hashes INT and FLOAT, in arrays, maps
// and structs too.
func (h hasher) typed(v domain.Value, t domain.Type, seed int64) int64 {
	switch {
	case v.IsNull():
		return seed
	case t.Kind == domain.KindInt64 && t.Bits != 0:
		return h.int(int32(v.AsInt()), seed)
	case t.Kind == domain.KindFloat64 && t.Bits != 0:
		return h.int(javaFloatBits(float32(v.AsFloat())), seed)
	case t.Kind == domain.KindList:
		for _, x := range v.AsList() {
			seed = h.typed(x, elemOf(t), seed)
		}
		return seed
	case t.Kind == domain.KindMap:
		for _, e := range v.Entries() {
			seed = h.typed(e.Fields()[0], keyOf(t), seed)
			seed = h.typed(e.Fields()[1], elemOf(t), seed)
		}
		return seed
	case t.Kind == domain.KindStruct && len(t.Fields) == len(v.Fields()):
		for i, x := range v.Fields() {
			seed = h.typed(x, t.Fields[i].Type, seed)
		}
		return seed
	}
	return h.value(v, seed)
}

// Murmur3 x86_32 as Spark's Murmur3_x86_32, including its way of hashing
// the bytes after the last full 4-byte block one (signed) byte at a time.
const (
	murC1 = 0xcc9e2d51
	murC2 = 0x1b873593
)

func murMixK1(k uint32) uint32 {
	k *= murC1
	k = k<<15 | k>>17
	return k * murC2
}

func murMixH1(h, k uint32) uint32 {
	h ^= k
	h = h<<13 | h>>19
	return h*5 + 0xe6546b64
}

func murFmix(h, length uint32) uint32 {
	h ^= length
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	return h ^ h>>16
}

func murmurInt(v, seed uint32) uint32 {
	return murFmix(murMixH1(seed, murMixK1(v)), 4)
}

func murmurLong(v uint64, seed uint32) uint32 {
	h := murMixH1(seed, murMixK1(uint32(v)))
	h = murMixH1(h, murMixK1(uint32(v>>32)))
	return murFmix(h, 8)
}

func murmurBytes(s string, seed uint32) uint32 {
	h := seed
	n := len(s) - len(s)%4
	for i := 0; i < n; i += 4 {
		k := uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
		h = murMixH1(h, murMixK1(k))
	}
	for i := n; i < len(s); i++ {
		h = murMixH1(h, murMixK1(uint32(int32(int8(s[i])))))
	}
	return murFmix(h, uint32(len(s)))
}

// XXH64, the algorithm of Spark's XXH64.
const (
	xxP1 uint64 = 11400714785074694791
	xxP2 uint64 = 14029467366897019727
	xxP3 uint64 = 1609587929392839161
	xxP4 uint64 = 9650029242287828579
	xxP5 uint64 = 2870177450012600261
)

func rotl64(x uint64, r uint) uint64 { return x<<r | x>>(64-r) }

func xxRound(acc, input uint64) uint64 {
	acc += input * xxP2
	return rotl64(acc, 31) * xxP1
}

func xxMerge(acc, v uint64) uint64 {
	acc ^= xxRound(0, v)
	return acc*xxP1 + xxP4
}

// xxh64Int is XXH64 of the 4 little-endian bytes of v.
func xxh64Int(v uint32, seed uint64) uint64 {
	h := seed + xxP5 + 4
	h ^= uint64(v) * xxP1
	return xxAvalanche(rotl64(h, 23)*xxP2 + xxP3)
}

// xxh64Long is XXH64 of the 8 little-endian bytes of v.
func xxh64Long(v, seed uint64) uint64 {
	h := seed + xxP5 + 8
	h ^= xxRound(0, v)
	return xxAvalanche(rotl64(h, 27)*xxP1 + xxP4)
}

func xxAvalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= xxP2
	h ^= h >> 29
	h *= xxP3
	return h ^ h>>32
}

func le64(b string) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func xxh64(b string, seed uint64) uint64 {
	n := len(b)
	var h uint64
	if n >= 32 {
		v1, v2, v3, v4 := seed+xxP1+xxP2, seed+xxP2, seed, seed-xxP1
		for len(b) >= 32 {
			v1 = xxRound(v1, le64(b))
			v2 = xxRound(v2, le64(b[8:]))
			v3 = xxRound(v3, le64(b[16:]))
			v4 = xxRound(v4, le64(b[24:]))
			b = b[32:]
		}
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18)
		h = xxMerge(h, v1)
		h = xxMerge(h, v2)
		h = xxMerge(h, v3)
		h = xxMerge(h, v4)
	} else {
		h = seed + xxP5
	}
	h += uint64(n)
	for ; len(b) >= 8; b = b[8:] {
		h ^= xxRound(0, le64(b))
		h = rotl64(h, 27)*xxP1 + xxP4
	}
	if len(b) >= 4 {
		h ^= uint64(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24) * xxP1
		h = rotl64(h, 23)*xxP2 + xxP3
		b = b[4:]
	}
	for k := 0; k < len(b); k++ {
		h ^= uint64(b[k]) * xxP5
		h = rotl64(h, 11) * xxP1
	}
	return xxAvalanche(h)
}

// javaBigIntegerBytes is Java's BigInteger.toByteArray of u: two's
// complement, big-endian, in the fewest bytes that keep the sign.
func javaBigIntegerBytes(u domain.Int128) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(u.Hi))
	binary.BigEndian.PutUint64(b[8:], u.Lo)
	i := 0
	for i < 15 && (b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xff && b[i+1]&0x80 != 0) {
		i++
	}
	return string(b[i:])
}

// compileToBinary: to_binary(s[, fmt]) reads s in fmt, a string literal:
// 'hex' (the default; an odd number of digits has a leading 0), 'base64'
// or 'utf-8'. Text that does not read is CONVERSION_INVALID_INPUT (NULL
// from try_to_binary).
func compileToBinary(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.jsonArg(e, 0, name)
	if err != nil {
		return nil, err
	}
	format := "hex"
	if len(e.Args) == 2 {
		lit, ok := e.Args[1].(*syntax.Literal)
		if !ok || lit.Kind != syntax.StringLit {
			return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[1].Position(), "the format of %s must be a string literal: 'hex', 'base64' or 'utf-8'", name)
		}
		format = strings.ToLower(lit.Value)
	}
	var read func(s string) ([]byte, bool)
	switch format {
	case "hex":
		read = func(s string) ([]byte, bool) {
			if len(s)%2 != 0 {
				s = "0" + s
			}
			b, err := hex.DecodeString(s)
			return b, err == nil
		}
	case "base64":
		read = func(s string) ([]byte, bool) {
			enc := base64.StdEncoding
			if !strings.HasSuffix(s, "=") && len(s)%4 != 0 {
				enc = base64.RawStdEncoding
			}
			b, err := enc.DecodeString(s)
			return b, err == nil
		}
	case "utf-8", "utf8":
		read = func(s string) ([]byte, bool) { return []byte(s), true }
	default:
		return nil, exprErr(domain.CodeInvalidParameterValue, e.Args[1].Position(), "%s reads 'hex', 'base64' or 'utf-8', not '%s'", name, format)
	}
	try, pos := strings.HasPrefix(name, "try_"), e.Pos
	return &valuesNode{args: []node{x}, t: domain.TypeBytes, fails: !try, row: func(a []domain.Value) (domain.Value, error) {
		b, ok := read(a[0].AsString())
		switch {
		case ok:
			return domain.Bytes(b), nil
		case try:
			return domain.Null(), nil
		}
		return domain.Value{}, exprErr(domain.CodeConversionInvalidInput, pos, "the value '%s' cannot be converted to binary in the format %s", a[0].AsString(), format)
	}}, nil
}
