package domain

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// MaxDecimalPrecision is the most digits a DECIMAL holds, as in Spark: an
// unscaled value of 38 digits fits in 128 bits.
const MaxDecimalPrecision = 38

// Int128 is a two's-complement 128-bit integer: the unscaled value of a
// DECIMAL. Most decimals fit in an int64, and the operations below take a
// 64-bit path for them; the rest go through math/big.
type Int128 struct {
	Hi int64
	Lo uint64
}

// Int128Of widens x.
func Int128Of(x int64) Int128 { return Int128{Hi: x >> 63, Lo: uint64(x)} }

// IsInt64 reports whether a fits in an int64.
func (a Int128) IsInt64() bool { return a.Hi == int64(a.Lo)>>63 }

// Sign is -1, 0 or 1.
func (a Int128) Sign() int {
	switch {
	case a.Hi < 0:
		return -1
	case a.Hi == 0 && a.Lo == 0:
		return 0
	}
	return 1
}

// Cmp is -1, 0 or 1 as a is less than, equal to or greater than b.
func (a Int128) Cmp(b Int128) int {
	switch {
	case a.Hi < b.Hi:
		return -1
	case a.Hi > b.Hi:
		return 1
	case a.Lo < b.Lo:
		return -1
	case a.Lo > b.Lo:
		return 1
	}
	return 0
}

// Neg is -a; -MinInt128 wraps, which no decimal reaches (10^38 < 2^127).
func (a Int128) Neg() Int128 {
	lo, borrow := bits.Sub64(0, a.Lo, 0)
	return Int128{Hi: -a.Hi - int64(borrow), Lo: lo}
}

// Add is a + b, and false when the sum does not fit in 128 bits (two
// 38-digit decimals can reach 2 × 10^38, beyond 2^127).
func (a Int128) Add(b Int128) (Int128, bool) {
	lo, carry := bits.Add64(a.Lo, b.Lo, 0)
	r := Int128{Hi: a.Hi + b.Hi + int64(carry), Lo: lo}
	return r, (a.Hi < 0) != (b.Hi < 0) || (r.Hi < 0) == (a.Hi < 0)
}

// Big converts a to a big.Int.
func (a Int128) Big() *big.Int {
	if a.IsInt64() {
		return big.NewInt(int64(a.Lo))
	}
	neg := a.Hi < 0
	m := a
	if neg {
		m = a.Neg()
	}
	var w [16]byte
	for i := 0; i < 8; i++ {
		w[7-i] = byte(uint64(m.Hi) >> (8 * i))
		w[15-i] = byte(m.Lo >> (8 * i))
	}
	x := new(big.Int).SetBytes(w[:])
	if neg {
		x.Neg(x)
	}
	return x
}

// Int128FromBig converts x, reporting false when it does not fit in 128 bits.
func Int128FromBig(x *big.Int) (Int128, bool) {
	if x.IsInt64() {
		return Int128Of(x.Int64()), true
	}
	if x.BitLen() > 127 {
		return Int128{}, false
	}
	m := new(big.Int).Abs(x)
	var w [16]byte
	m.FillBytes(w[:])
	var r Int128
	for i := 0; i < 8; i++ {
		r.Hi = r.Hi<<8 | int64(w[i])
		r.Lo = r.Lo<<8 | uint64(w[8+i])
	}
	if x.Sign() < 0 {
		r = r.Neg()
	}
	return r, true
}

// pow10s holds 10^0 … 10^38.
var pow10s = func() [MaxDecimalPrecision + 1]Int128 {
	var p [MaxDecimalPrecision + 1]Int128
	x := big.NewInt(1)
	ten := big.NewInt(10)
	for i := range p {
		p[i], _ = Int128FromBig(x)
		x.Mul(x, ten)
	}
	return p
}()

// Pow10 is 10^n for 0 ≤ n ≤ 38.
func Pow10(n int) Int128 { return pow10s[n] }

// FitsPrecision reports whether a has at most p digits.
func (a Int128) FitsPrecision(p int) bool {
	if a.Hi < 0 {
		a = a.Neg()
	}
	return a.Cmp(pow10s[p]) < 0
}

// Decimal is an exact decimal value of a given precision and scale; a NULL
// decimal is never made, only NULL.
func Decimal(unscaled Int128, precision, scale int) Value {
	v := Value{kind: KindDecimal, prec: uint8(precision), scale: uint8(scale), i: int64(unscaled.Lo)}
	if !unscaled.IsInt64() {
		var hi [8]byte
		for i := range hi {
			hi[i] = byte(uint64(unscaled.Hi) >> (8 * i))
		}
		v.s = string(hi[:])
	}
	return v
}

// AsDecimal returns a decimal's unscaled value.
func (v Value) AsDecimal() Int128 {
	if v.s == "" {
		return Int128Of(v.i)
	}
	var hi uint64
	for i := 7; i >= 0; i-- {
		hi = hi<<8 | uint64(v.s[i])
	}
	return Int128{Hi: int64(hi), Lo: uint64(v.i)}
}

// Precision and Scale are a decimal value's type.
func (v Value) Precision() int { return int(v.prec) }
func (v Value) Scale() int     { return int(v.scale) }

// DecimalType is the type DECIMAL(p, s).
func DecimalType(precision, scale int) Type {
	return Type{Kind: KindDecimal, Precision: precision, Scale: scale}
}

// FormatDecimal renders an unscaled value at a scale as plain digits, as
// Spark casts a decimal to a string: 0.30, -12.500, 7.
func FormatDecimal(u Int128, scale int) string {
	var digits string
	neg := u.Sign() < 0
	if u.IsInt64() {
		x := int64(u.Lo)
		if neg {
			digits = uitoa(uint64(-x)) // -MinInt64 wraps to its magnitude
		} else {
			digits = uitoa(uint64(x))
		}
	} else {
		digits = new(big.Int).Abs(u.Big()).String()
	}
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

func uitoa(x uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + x%10)
		x /= 10
		if x == 0 {
			return string(b[i:])
		}
	}
}

// Rescale brings an unscaled value from scale `from` to scale `to`, rounding
// half away from zero (Spark's HALF_UP) when digits are dropped.
func Rescale(u Int128, from, to int) (Int128, bool) {
	switch {
	case to == from:
		return u, true
	case to > from:
		return MulInt128(u, pow10s[min(to-from, MaxDecimalPrecision)], to-from <= MaxDecimalPrecision)
	}
	return divRound(u, from-to), true
}

// MulInt128 is a × b, reporting false when the product does not fit in 128
// bits. ok=false on entry is passed through (a scale step too large to take).
func MulInt128(a, b Int128, ok bool) (Int128, bool) {
	if !ok {
		return Int128{}, false
	}
	if a.IsInt64() && b.IsInt64() {
		x, y := int64(a.Lo), int64(b.Lo)
		hi, lo := bits.Mul64(uint64(abs64(x)), uint64(abs64(y)))
		if hi == 0 && lo <= math.MaxInt64 && x != math.MinInt64 && y != math.MinInt64 {
			r := int64(lo)
			if (x < 0) != (y < 0) {
				r = -r
			}
			return Int128Of(r), true
		}
	}
	return Int128FromBig(new(big.Int).Mul(a.Big(), b.Big()))
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// divRound divides u by 10^n rounding half away from zero.
func divRound(u Int128, n int) Int128 {
	if n > MaxDecimalPrecision {
		return Int128{}
	}
	if u.IsInt64() && n <= 18 {
		x, d := int64(u.Lo), int64(pow10s[n].Lo)
		q, r := x/d, x%d
		if 2*abs64(r) >= d {
			if x < 0 {
				q--
			} else {
				q++
			}
		}
		return Int128Of(q)
	}
	q, _ := Int128FromBig(QuoRound(u.Big(), pow10s[n].Big()))
	return q
}

// QuoRound is a / b rounded half away from zero; b is not zero.
func QuoRound(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() != 0 {
		twice := new(big.Int).Abs(r)
		twice.Lsh(twice, 1)
		if twice.Cmp(new(big.Int).Abs(b)) >= 0 {
			if (a.Sign() < 0) != (b.Sign() < 0) {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return q
}

// ParseDecimal reads a decimal number (digits with an optional sign, point
// and exponent, as Spark's cast reads them) exactly, as an unscaled value at
// the given scale rounded half away from zero. ok is false for text that is
// not a number; fits is false when the value needs more than precision digits.
func ParseDecimal(s string, precision, scale int) (u Int128, ok, fits bool) {
	x, exp, ok := parseDecimalText(s)
	if !ok {
		return Int128{}, false, false
	}
	// the value is x × 10^exp; bring it to x' × 10^-scale
	shift := exp + scale
	switch {
	case shift > 0:
		if shift > 2*MaxDecimalPrecision {
			return Int128{}, true, x.Sign() == 0
		}
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	case shift < 0:
		if -shift > len(s)+MaxDecimalPrecision {
			return Int128{}, true, true // rounds to zero
		}
		x = QuoRound(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-shift)), nil))
	}
	u, ok128 := Int128FromBig(x)
	if !ok128 || !u.FitsPrecision(precision) {
		return Int128{}, true, false
	}
	return u, true, true
}

// parseDecimalText reads [+-]digits[.digits][e[+-]digits] as x × 10^exp.
func parseDecimalText(s string) (*big.Int, int, bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var digits []byte
	exp, seen := 0, false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits, seen = append(digits, s[i]), true
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits, seen = append(digits, s[i]), true
			exp--
		}
	}
	if !seen {
		return nil, 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		start, e := i, 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if e < 1e6 {
				e = e*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return nil, 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(s) {
		return nil, 0, false
	}
	x, _ := new(big.Int).SetString(string(digits), 10)
	if neg {
		x.Neg(x)
	}
	return x, exp, true
}

// DecimalFromFloat converts f exactly as its shortest decimal text reads (as
// Spark's cast of a double does, through its string form), at the scale.
func DecimalFromFloat(f float64, precision, scale int) (Int128, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Int128{}, false
	}
	u, _, fits := ParseDecimal(formatFloatExact(f), precision, scale)
	return u, fits
}

func formatFloatExact(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// DecimalToFloat is the double nearest to u × 10^-scale.
func DecimalToFloat(u Int128, scale int) float64 {
	if u.IsInt64() && scale <= 22 {
		x := int64(u.Lo)
		if abs64(x) < 1<<53 {
			return float64(x) / math.Pow10(scale) // both exact: one rounding
		}
	}
	r := new(big.Rat).SetFrac(u.Big(), pow10s[min(scale, MaxDecimalPrecision)].Big())
	f, _ := r.Float64()
	return f
}

// CompareDecimal orders a × 10^-as against b × 10^-bs by value.
func CompareDecimal(a Int128, as int, b Int128, bs int) int {
	if as == bs {
		return a.Cmp(b)
	}
	if as < bs {
		if x, ok := Rescale(a, as, bs); ok {
			return x.Cmp(b)
		}
		return a.Sign() // a's magnitude is beyond any b
	}
	if y, ok := Rescale(b, bs, as); ok {
		return a.Cmp(y)
	}
	return -b.Sign()
}

// checkDecimal refuses a decoded decimal that no encoder writes: a precision
// outside 1…38, a scale above it, high bits that are only the sign of the low
// ones, or more digits than the precision.
func checkDecimal(v Value) error {
	switch {
	case v.prec < 1 || v.prec > MaxDecimalPrecision || v.scale > v.prec:
		return fmt.Errorf("bad decimal type (%d,%d)", v.prec, v.scale)
	case v.s != "" && (len(v.s) != 8 || v.AsDecimal().IsInt64()):
		return errors.New("bad decimal high bits")
	case !v.AsDecimal().FitsPrecision(int(v.prec)):
		return fmt.Errorf("decimal has more than %d digits", v.prec)
	}
	return nil
}

// checkDecimalTypes refuses a type holding a decimal type no encoder
// writes: a precision outside 1…38, or a scale outside 0…precision.
func checkDecimalTypes(t Type) error {
	if t.Kind == KindDecimal && (t.Precision < 1 || t.Precision > MaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision) {
		return fmt.Errorf("bad decimal type (%d,%d)", t.Precision, t.Scale)
	}
	for _, sub := range []*Type{t.Key, t.Elem} {
		if sub != nil {
			if err := checkDecimalTypes(*sub); err != nil {
				return err
			}
		}
	}
	for _, f := range t.Fields {
		if err := checkDecimalTypes(f.Type); err != nil {
			return err
		}
	}
	return nil
}
