package cdc

import (
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain"
)

var seqTypes = []domain.Type{
	domain.TypeInt64, domain.TypeFloat64, domain.TypeString, domain.TypeBool,
	{Kind: domain.KindTimestamp}, {Kind: domain.KindDate},
	domain.StructOf(domain.Field{Name: "a", Type: domain.TypeInt64}, domain.Field{Name: "b", Type: domain.TypeString}),
	domain.ListOf(domain.TypeInt64),
	domain.DecimalType(38, 4),
}

// seqValue makes a value of type t from fuzz input.
func seqValue(t domain.Type, i int64, f float64, s string, null bool) domain.Value {
	switch t.Kind {
	case domain.KindInt64:
		return domain.Int(i)
	case domain.KindFloat64:
		return domain.Float(f)
	case domain.KindString:
		return domain.String(s)
	case domain.KindBool:
		return domain.Bool(i%2 == 0)
	case domain.KindTimestamp:
		return domain.TimestampMicros(i)
	case domain.KindDate:
		return domain.DateDays(i % 1_000_000)
	case domain.KindDecimal:
		u := domain.Int128Of(i)
		if len(s)%2 == 1 { // beyond 64 bits
			u, _ = domain.MulInt128(u, domain.Pow10(18), true)
		}
		return domain.Decimal(u, 38, 4)
	case domain.KindStruct:
		b := domain.String(s)
		if null {
			b = domain.Null()
		}
		return domain.Struct(domain.Int(i), b)
	}
	items := []domain.Value{}
	for _, c := range []byte(s) {
		items = append(items, domain.Int(int64(c)-int64(i%3)))
	}
	return domain.List(items...)
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// FuzzSeqKey: sequence keys order as the values do, and decode to them.
func FuzzSeqKey(f *testing.F) {
	f.Add(int64(1), int64(-2), 0.5, math.Copysign(0, -1), "a", "a\x00b", false, true, 0)
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), math.Inf(-1), math.NaN(), "", "\x00", true, false, 6)
	f.Fuzz(func(t *testing.T, i1, i2 int64, f1, f2 float64, s1, s2 string, n1, n2 bool, ti int) {
		typ := seqTypes[(ti%len(seqTypes)+len(seqTypes))%len(seqTypes)]
		a, b := seqValue(typ, i1, f1, s1, n1), seqValue(typ, i2, f2, s2, n2)
		ka, kb := string(appendSeqKey(nil, a)), string(appendSeqKey(nil, b))
		want := sign(domain.Compare(a, b))
		if typ.Kind == domain.KindFloat64 && (math.IsNaN(a.AsFloat()) && math.IsNaN(b.AsFloat()) || a.AsFloat() == 0 && b.AsFloat() == 0) {
			want = sign(strings.Compare(ka, kb)) // NaNs are one NaN; -0 sorts before 0 in both
		}
		if got := sign(strings.Compare(ka, kb)); got != want {
			t.Fatalf("%s: Compare(%v, %v) = %d, keys compare %d", typ, a, b, want, got)
		}
		back, end := decodeSeqKey(ka, 0, typ)
		if end != len(ka) {
			t.Fatalf("%s: decoding %v read %d of %d bytes", typ, a, end, len(ka))
		}
		if !back.Equal(a) && !(typ.Kind == domain.KindFloat64 && math.IsNaN(a.AsFloat())) {
			t.Fatalf("%s: %v decodes to %v", typ, a, back)
		}
	})
}
