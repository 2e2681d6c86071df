package domain

import (
	"math"
	"math/big"
	mrand "math/rand"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomUnscaled is a random value of at most p digits, often near the
// edges (0, ±1, ±(10^p - 1), around 2^63).
func randomUnscaled(r *rand.Rand, p int) *big.Int {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)
	var x *big.Int
	switch r.IntN(6) {
	case 0:
		x = big.NewInt(int64(r.IntN(3)) - 1)
	case 1:
		x = new(big.Int).Sub(limit, big.NewInt(1))
	case 2:
		x = new(big.Int).Add(big.NewInt(math.MaxInt64), big.NewInt(int64(r.IntN(5))-2))
		if x.Cmp(limit) >= 0 {
			x.Mod(x, limit)
		}
	default:
		x = new(big.Int).Rand(mrand.New(mrand.NewSource(r.Int64())), limit)
	}
	if r.IntN(2) == 0 {
		x.Neg(x)
	}
	return x
}

func TestInt128MatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		p := 1 + r.IntN(MaxDecimalPrecision)
		a, b := randomUnscaled(r, p), randomUnscaled(r, 1+r.IntN(MaxDecimalPrecision))
		x, ok := Int128FromBig(a)
		y, ok2 := Int128FromBig(b)
		if !ok || !ok2 {
			t.Fatalf("%v or %v does not fit 128 bits", a, b)
		}
		if x.Big().Cmp(a) != 0 {
			t.Fatalf("Int128FromBig(%v).Big() = %v", a, x.Big())
		}
		if got, want := x.Cmp(y), a.Cmp(b); got != want {
			t.Fatalf("Cmp(%v, %v) = %d, want %d", a, b, got, want)
		}
		sum := new(big.Int).Add(a, b)
		if got, ok := x.Add(y); ok != (sum.BitLen() <= 127) || ok && got.Big().Cmp(sum) != 0 {
			t.Fatalf("%v + %v = %v (%v), want %v", a, b, got.Big(), ok, sum)
		}
		if got := x.Neg().Big(); got.Cmp(new(big.Int).Neg(a)) != 0 {
			t.Fatalf("-%v = %v", a, got)
		}
		prod := new(big.Int).Mul(a, b)
		m, ok := MulInt128(x, y, true)
		if ok != (prod.BitLen() <= 127) || ok && m.Big().Cmp(prod) != 0 {
			t.Fatalf("%v × %v = %v (%v), want %v", a, b, m.Big(), ok, prod)
		}
		if got, want := x.FitsPrecision(p), new(big.Int).Abs(a).Cmp(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil)) < 0; got != want {
			t.Fatalf("FitsPrecision(%v, %d) = %v", a, p, got)
		}
	}
}

// TestDecimalTextAndScale checks formatting, parsing, rescaling, ordering
// and conversion to double against big.Rat on random values and scales.
func TestDecimalTextAndScale(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		p := 1 + r.IntN(MaxDecimalPrecision)
		s := r.IntN(p + 1)
		a := randomUnscaled(r, p)
		u, _ := Int128FromBig(a)
		exact := new(big.Rat).SetFrac(a, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil))

		text := FormatDecimal(u, s)
		if want := exact.FloatString(s); text != want {
			t.Fatalf("FormatDecimal(%v, %d) = %q, want %q", a, s, text, want)
		}
		back, ok, fits := ParseDecimal(text, p, s)
		if !ok || !fits || back != u {
			t.Fatalf("ParseDecimal(%q, %d, %d) = %v %v %v, want %v", text, p, s, back.Big(), ok, fits, a)
		}

		// rescaling to another scale rounds half away from zero
		to := r.IntN(MaxDecimalPrecision + 1)
		got, ok := Rescale(u, s, to)
		scaled := new(big.Rat).Mul(exact, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(to)), nil)))
		want := roundHalfUpRat(scaled)
		if ok != (want.BitLen() <= 127) || ok && got.Big().Cmp(want) != 0 {
			t.Fatalf("Rescale(%v, %d, %d) = %v (%v), want %v", a, s, to, got.Big(), ok, want)
		}

		b := randomUnscaled(r, p)
		bs := r.IntN(p + 1)
		v, _ := Int128FromBig(b)
		other := new(big.Rat).SetFrac(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(bs)), nil))
		if got, want := CompareDecimal(u, s, v, bs), exact.Cmp(other); got != want {
			t.Fatalf("CompareDecimal(%s, %s) = %d, want %d", text, FormatDecimal(v, bs), got, want)
		}

		f, _ := exact.Float64()
		if got := DecimalToFloat(u, s); got != f {
			t.Fatalf("DecimalToFloat(%s) = %v, want %v", text, got, f)
		}
	}
}

func roundHalfUpRat(x *big.Rat) *big.Int {
	q, rem := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	twice := new(big.Int).Abs(rem)
	twice.Lsh(twice, 1)
	if twice.Cmp(x.Denom()) >= 0 {
		if x.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

func TestParseDecimal(t *testing.T) {
	for _, tt := range []struct {
		in       string
		p, s     int
		want     string
		ok, fits bool
	}{
		{"0.1", 10, 2, "0.10", true, true},
		{"-12.345", 10, 2, "-12.35", true, true}, // half away from zero
		{"12.344", 10, 2, "12.34", true, true},
		{"1e3", 10, 0, "1000", true, true},
		{"1.5E-1", 10, 2, "0.15", true, true},
		{"+.5", 3, 1, "0.5", true, true},
		{"5.", 3, 1, "5.0", true, true},
		{"99999999.995", 10, 2, "", true, false}, // rounds up to 11 digits
		{"1e400", 38, 0, "", true, false},
		{"1e-400", 38, 2, "0.00", true, true},
		{"12345678901234567890123456789012345678", 38, 0, "12345678901234567890123456789012345678", true, true},
		{"", 10, 0, "", false, false},
		{"-", 10, 0, "", false, false},
		{"1.2.3", 10, 0, "", false, false},
		{"1e", 10, 0, "", false, false},
		{"0x10", 10, 0, "", false, false},
		{"NaN", 10, 0, "", false, false},
		{" 1", 10, 0, "", false, false}, // callers trim
	} {
		u, ok, fits := ParseDecimal(tt.in, tt.p, tt.s)
		if ok != tt.ok || fits != tt.fits {
			t.Errorf("ParseDecimal(%q, %d, %d): ok %v fits %v, want %v %v", tt.in, tt.p, tt.s, ok, fits, tt.ok, tt.fits)
			continue
		}
		if fits {
			if got := FormatDecimal(u, tt.s); got != tt.want {
				t.Errorf("ParseDecimal(%q, %d, %d) = %s, want %s", tt.in, tt.p, tt.s, got, tt.want)
			}
		}
	}
}

// FuzzParseDecimal checks that the parser never panics, reads what big.Rat
// reads as the same number, and reads back what FormatDecimal writes.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-1.5", "1e3", ".5", "5.", "1E-7", "99999999999999999999999999999999999999", "1e99999999", "+-1"} {
		f.Add(s, uint8(38), uint8(4))
	}
	f.Fuzz(func(t *testing.T, s string, p, sc uint8) {
		prec := 1 + int(p)%MaxDecimalPrecision
		scale := int(sc) % (prec + 1)
		u, ok, fits := ParseDecimal(s, prec, scale)
		if !ok || !fits {
			return
		}
		if !u.FitsPrecision(prec) {
			t.Fatalf("ParseDecimal(%q) = %v has more than %d digits", s, u.Big(), prec)
		}
		text := FormatDecimal(u, scale)
		back, ok, fits := ParseDecimal(text, prec, scale)
		if !ok || !fits || back != u {
			t.Fatalf("%q → %q reads back as %v", s, text, back.Big())
		}
		if strings.ContainsAny(s, "eE") || len(s) > 200 {
			return // big.Rat takes exponents beyond what it can hold quickly
		}
		r, okRat := new(big.Rat).SetString(s)
		if okRat {
			scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
			if want := roundHalfUpRat(scaled); want.Cmp(u.Big()) != 0 {
				t.Fatalf("ParseDecimal(%q, %d, %d) = %v, big.Rat says %v", s, prec, scale, u.Big(), want)
			}
		}
	})
}

// decimalBatch is the batch pinned by testdata/batch_decimal_v3.golden.
func decimalBatch(t testing.TB) *Batch {
	max38, _ := Int128FromBig(new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil), big.NewInt(1)))
	schema := NewSchema(
		Field{Name: "price", Type: DecimalType(10, 2), Nullable: true},
		Field{Name: "wide", Type: DecimalType(38, 10), Nullable: true},
		Field{Name: "list", Type: ListOf(DecimalType(5, 0)), Nullable: true},
	)
	return batchOfRows(t, schema,
		[]Value{Decimal(Int128Of(30), 10, 2), Decimal(max38, 38, 10), List(Decimal(Int128Of(-7), 5, 0), Null())},
		[]Value{Null(), Decimal(max38.Neg(), 38, 10), Null()},
		[]Value{Decimal(Int128Of(-9999999999), 10, 2), Decimal(Int128Of(math.MinInt64), 38, 10), List()},
	)
}

func TestGoldenDecimalBatch(t *testing.T) {
	b := decimalBatch(t)
	p, err := EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(checkGolden(t, "batch_decimal_v3.golden", p))
	if err != nil {
		t.Fatal(err)
	}
	if diff := batchDiff(b, got); diff != "" {
		t.Errorf("golden decimal batch decodes differently: %s", diff)
	}
	if s := got.Row(0)[1].String(); s != "9999999999999999999999999999.9999999999" {
		t.Errorf("38-digit decimal reads back as %s", s)
	}
}

// TestDecodeRefusesBadDecimals checks that a decimal no encoder writes is
// BATCH_CODEC_INVALID, never a wrong value.
func TestDecodeRefusesBadDecimals(t *testing.T) {
	schema := NewSchema(Field{Name: "d", Type: DecimalType(3, 1), Nullable: true})
	mk := func(v Value) []byte {
		// built by hand: EncodeBatch refuses these
		e := encoder{}
		e.byte1(batchCodecVersion)
		e.bytes([]byte(`{"fields":[{"name":"d","type":{"kind":13,"precision":3,"scale":1},"nullable":true}]}`))
		e.uvarint(1)
		e.byte1(0)
		e.byte1(byte(KindDecimal))
		e.byte1(v.prec)
		e.byte1(v.scale)
		e.varint(v.i)
		e.str(v.s)
		return seal(e.b)
	}
	// a schema of a decimal type no encoder writes, even over NULLs only
	for _, typ := range []string{`{"kind":13,"precision":50,"scale":60}`, `{"kind":13,"precision":0}`, `{"kind":8,"elem":{"kind":13,"precision":3,"scale":4}}`} {
		e := encoder{}
		e.byte1(batchCodecVersion)
		e.bytes([]byte(`{"fields":[{"name":"d","type":` + typ + `,"nullable":true}]}`))
		e.uvarint(1)
		e.byte1(0)
		e.byte1(byte(KindNull))
		if _, err := DecodeBatch(seal(e.b)); CodeOf(err) != CodeBatchCodec {
			t.Errorf("a schema of type %s: error %v, want %s", typ, err, CodeBatchCodec)
		}
	}
	good := mk(Decimal(Int128Of(999), 3, 1))
	if b, err := DecodeBatch(good); err != nil || b.Row(0)[0].String() != "99.9" {
		t.Fatalf("the well-formed batch: %v, %v", b, err)
	}
	if _, err := EncodeBatch(batchOfRows(t, schema, []Value{Decimal(Int128Of(1), 4, 1)})); CodeOf(err) != CodeBatchCodec {
		t.Errorf("encoding a decimal(4,1) in a decimal(3,1) column: %v", err)
	}
	for name, v := range map[string]Value{
		"too many digits":      {kind: KindDecimal, prec: 3, scale: 1, i: 1000},
		"other type":           {kind: KindDecimal, prec: 4, scale: 1, i: 1},
		"precision 0":          {kind: KindDecimal, prec: 0, scale: 0, i: 0},
		"precision 39":         {kind: KindDecimal, prec: 39, scale: 1, i: 0},
		"scale over precision": {kind: KindDecimal, prec: 3, scale: 4, i: 0},
		"sign-only high bits":  {kind: KindDecimal, prec: 3, scale: 1, i: 5, s: "\x00\x00\x00\x00\x00\x00\x00\x00"},
		"short high bits":      {kind: KindDecimal, prec: 3, scale: 1, i: 5, s: "\x01"},
	} {
		if _, err := DecodeBatch(mk(v)); CodeOf(err) != CodeBatchCodec {
			t.Errorf("%s: error %v, want %s", name, err, CodeBatchCodec)
		}
	}
}
