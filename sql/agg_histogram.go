package sql

import (
	"math"

	"github.com/sluicehq/sluice/domain"
)

// ---- histogram_numeric ----

// histogramAcc is histogram_numeric(x, nb): each group's values folded into
// at most nb bins by Spark's NumericHistogram (the streaming histogram of
// Ben-Haim and Tom-Tov): a value joins the bin at its x or makes a new one,
// and past nb bins the two closest bins merge into their weighted mean. Ties
// between equally close pairs are broken by java.util.Random seeded 31183,
// as in Spark, so that the bins are Spark's for the same input order.
type histogramAcc struct {
	nb    int
	kind  domain.Kind
	t     domain.Type // the input's type, which x keeps
	hists []*numericHistogram
}

type histBin struct{ x, y float64 }

type numericHistogram struct {
	bins []histBin
	rng  javaRandom
}

func (a *histogramAcc) grow(n int) {
	for len(a.hists) < n {
		a.hists = append(a.hists, nil)
	}
}

func (a *histogramAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || x.IsNull(i) {
			continue
		}
		h := a.hists[g]
		if h == nil {
			h = &numericHistogram{rng: newJavaRandom(31183)}
			a.hists[g] = h
		}
		var v float64
		switch x.Kind {
		case domain.KindFloat64:
			v = x.Floats[i]
		case domain.KindDecimal:
			d := x.Values[i]
			v = domain.DecimalToFloat(d.AsDecimal(), d.Scale())
		default:
			v = float64(x.Ints[i])
		}
		h.add(v, a.nb)
	}
	return nil
}

// add is NumericHistogram.add.
func (h *numericHistogram) add(v float64, nb int) {
	lo, hi := 0, len(h.bins)
	bin := 0
	for lo < hi {
		bin = (lo + hi) / 2
		switch {
		case h.bins[bin].x > v:
			hi = bin
		case h.bins[bin].x < v:
			bin++
			lo = bin
		default:
			lo = hi // found
		}
	}
	if bin < len(h.bins) && h.bins[bin].x == v {
		h.bins[bin].y++
		return
	}
	h.bins = append(h.bins, histBin{})
	copy(h.bins[bin+1:], h.bins[bin:])
	h.bins[bin] = histBin{x: v, y: 1}
	for len(h.bins) > nb {
		h.trim()
	}
}

// trim is NumericHistogram.trim: the closest pair of bins merge.
func (h *numericHistogram) trim() {
	smallest, at, count := h.bins[1].x-h.bins[0].x, 0, 1
	for i := 1; i < len(h.bins)-1; i++ {
		diff := h.bins[i+1].x - h.bins[i].x
		switch {
		case diff < smallest:
			smallest, at, count = diff, i, 1
		case diff == smallest:
			count++
			if h.rng.nextDouble() <= 1.0/float64(count) {
				at = i
			}
		}
	}
	l, r := h.bins[at], h.bins[at+1]
	d := l.y + r.y
	x := l.x * (l.y / d)
	x += r.x / d * r.y
	h.bins[at] = histBin{x: x, y: d}
	h.bins = append(h.bins[:at+1], h.bins[at+2:]...)
}

func (a *histogramAcc) result() (*domain.Column, error) {
	out := newCol(domain.KindList, len(a.hists))
	out.Nulls = make([]bool, len(a.hists))
	for g, h := range a.hists {
		if h == nil { // no value: NULL
			out.Nulls[g] = true
			continue
		}
		items := make([]domain.Value, len(h.bins))
		for i, b := range h.bins {
			items[i] = domain.Struct(a.xValue(b.x), domain.Float(b.y))
		}
		out.Values[g] = domain.List(items...)
	}
	return out, nil
}

// xValue is a bin's x in the input's type, as Spark gives it: an integer,
// date or timestamp truncated toward zero, a decimal rounded to its scale
// (NULL where it does not fit).
func (a *histogramAcc) xValue(x float64) domain.Value {
	switch a.kind {
	case domain.KindFloat64:
		if a.t.Bits == 32 {
			return domain.Float(float64(float32(x)))
		}
		return domain.Float(x)
	case domain.KindDecimal:
		u, ok := domain.DecimalFromFloat(x, a.t.Precision, a.t.Scale)
		if !ok {
			return domain.Null()
		}
		return domain.Decimal(u, a.t.Precision, a.t.Scale)
	}
	return intOfKind(a.kind, int64(math.Trunc(x)))
}

// intOfKind is the value of kind k (one of the kinds a column keeps as
// integers) whose integer is i.
func intOfKind(k domain.Kind, i int64) domain.Value {
	switch k {
	case domain.KindBool:
		return domain.Bool(i != 0)
	case domain.KindDate:
		return domain.DateDays(i)
	case domain.KindTimestamp:
		return domain.TimestampMicros(i)
	case domain.KindYearMonthInterval:
		return domain.YearMonthInterval(i)
	case domain.KindDayTimeInterval:
		return domain.DayTimeInterval(i)
	}
	return domain.Int(i)
}

func compileHistogramNumeric(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	t := c.Type()
	switch t.Kind {
	case domain.KindInt64, domain.KindFloat64, domain.KindDecimal, domain.KindDate, domain.KindTimestamp:
	case domain.KindNull:
		t = domain.TypeFloat64
		c.root = implicit(c.root, t, ac.call.Args[0].Position())
	default:
		return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[0].Position(), "%s needs a number, a date or a timestamp, found %s", ac.name, t)
	}
	nb, err := ac.constant(ac.call.Args[1], "number of bins")
	if err != nil {
		return err
	}
	if nb.Kind() != domain.KindInt64 || nb.AsInt() < 2 || nb.AsInt() > math.MaxInt32 {
		return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[1].Position(), "the number of bins of %s must be an integer of at least 2, found %s", ac.name, nb)
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = domain.ListOf(domain.StructOf(domain.Field{Name: "x", Type: t, Nullable: true}, domain.Field{Name: "y", Type: domain.TypeFloat64, Nullable: true}))
	bins := int(nb.AsInt())
	ac.a.newAcc = func() accumulator { return &histogramAcc{nb: bins, kind: t.Kind, t: t} }
	return nil
}

// javaRandom is java.util.Random: a 48-bit linear congruential generator,
// for results that match the JVM's bit for bit.
type javaRandom struct{ seed int64 }

const javaRandomMultiplier, javaRandomMask = 0x5DEECE66D, 1<<48 - 1

func newJavaRandom(seed int64) javaRandom {
	return javaRandom{seed: (seed ^ javaRandomMultiplier) & javaRandomMask}
}

func (r *javaRandom) next(bits uint) int64 {
	r.seed = (r.seed*javaRandomMultiplier + 0xB) & javaRandomMask
	return int64(int32(r.seed >> (48 - bits)))
}

func (r *javaRandom) nextDouble() float64 {
	return float64(r.next(26)<<27+r.next(27)) * (1.0 / (1 << 53))
}

// ---- schema_of_variant_agg ----

// variantSchemaAcc is schema_of_variant_agg(v): the shape that holds every
// variant of the group (mergeShapes), VOID for a group without one.
type variantSchemaAcc struct {
	shapes []*variantShape
}

func (a *variantSchemaAcc) grow(n int) {
	a.shapes = append(a.shapes, make([]*variantShape, n-len(a.shapes))...)
}

func (a *variantSchemaAcc) add(args []*domain.Column, groups []int32) error {
	x := args[0]
	for i, g := range groups {
		if g < 0 || x.IsNull(i) {
			continue
		}
		n, err := domain.ParseJSON(x.Strs[i])
		if err != nil {
			return domain.Errorf(domain.CodeMalformedRecord, "schema_of_variant_agg: a variant holds text that is not JSON")
		}
		shape := shapeOf(n)
		if a.shapes[g] != nil {
			shape = mergeShapes(a.shapes[g], shape)
		}
		a.shapes[g] = shape
	}
	return nil
}

func (a *variantSchemaAcc) result() (*domain.Column, error) {
	out := newCol(domain.KindString, len(a.shapes))
	for g, s := range a.shapes {
		out.Strs[g] = "VOID"
		if s != nil {
			out.Strs[g] = s.String()
		}
	}
	return out, nil
}

func compileSchemaOfVariantAgg(ac *aggCompile) error {
	c, err := ac.arg(0)
	if err != nil {
		return err
	}
	switch t := c.Type(); {
	case isVariant(t):
	case t.Kind == domain.KindNull:
		c.root = retype(c.root, domain.TypeVariant)
	default:
		return exprErr(domain.CodeDatatypeMismatch, ac.call.Args[0].Position(), "%s needs a variant, found %s", ac.name, t)
	}
	ac.a.args = []*Compiled{c}
	ac.a.t = domain.TypeString
	ac.a.newAcc = func() accumulator { return &variantSchemaAcc{} }
	return nil
}
