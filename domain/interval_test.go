package domain

import (
	"math"
	"testing"
)

func TestIntervalString(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{YearMonthInterval(14), "INTERVAL '1-2' YEAR TO MONTH"},
		{YearMonthInterval(-14), "INTERVAL '-1-2' YEAR TO MONTH"},
		{YearMonthInterval(0), "INTERVAL '0-0' YEAR TO MONTH"},
		{YearMonthInterval(math.MinInt64), "INTERVAL '-768614336404564650-8' YEAR TO MONTH"},
		{DayTimeInterval(((86400+2*3600+3*60+4)*1e6 + 500000)), "INTERVAL '1 02:03:04.5' DAY TO SECOND"},
		{DayTimeInterval(-1), "INTERVAL '-0 00:00:00.000001' DAY TO SECOND"},
		{DayTimeInterval(0), "INTERVAL '0 00:00:00' DAY TO SECOND"},
		{DayTimeInterval(math.MinInt64), "INTERVAL '-106751991 04:00:54.775808' DAY TO SECOND"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%d: got %s, want %s", tc.v.AsInt(), got, tc.want)
		}
	}
	if KindYearMonthInterval.String() != "interval year to month" || KindDayTimeInterval.String() != "interval day to second" {
		t.Error("kind names")
	}
}

func TestIntervalCompare(t *testing.T) {
	if Compare(DayTimeInterval(-5), DayTimeInterval(3)) >= 0 || Compare(YearMonthInterval(2), YearMonthInterval(2)) != 0 {
		t.Error("intervals compare by their numbers")
	}
	if Compare(YearMonthInterval(1), DayTimeInterval(1)) == 0 {
		t.Error("intervals of two kinds are not equal")
	}
}

// TestGoldenIntervalBatch pins the encoding of the interval kinds: they are
// int-backed as dates are, so version 1 carries them unchanged.
func TestGoldenIntervalBatch(t *testing.T) {
	schema := NewSchema(
		Field{Name: "ym", Type: Type{Kind: KindYearMonthInterval}, Nullable: true},
		Field{Name: "dt", Type: Type{Kind: KindDayTimeInterval}, Nullable: true},
		Field{Name: "nested", Type: ListOf(Type{Kind: KindDayTimeInterval}), Nullable: true},
	)
	N := Null()
	b := batchOfRows(t, schema,
		[]Value{YearMonthInterval(14), DayTimeInterval(93784500000), List(DayTimeInterval(1), N)},
		[]Value{N, DayTimeInterval(math.MinInt64), N},
		[]Value{YearMonthInterval(-1), N, List(DayTimeInterval(math.MaxInt64))},
	)
	p, err := EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, stored := range [][]byte{checkGolden(t, "batch_intervals_v3.golden", p), readGolden(t, "batch_intervals_v2.golden")} {
		got, err := DecodeBatch(stored)
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range b.Rows() {
			for j, v := range row {
				if w := got.Row(i)[j]; !w.Equal(v) {
					t.Errorf("version %d: row %d column %d: %v, want %v", stored[0], i, j, w, v)
				}
			}
		}
	}
}
