package cdc

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/domain"
)

// A generated change: key, sequence, values, operation.
type genChange struct {
	key, seq    int64
	name, city  string
	del, trunc  bool
	sourceIndex int
}

var stored = domain.NewSchema(
	domain.Field{Name: "id", Type: domain.TypeInt64},
	domain.Field{Name: "name", Type: domain.TypeString, Nullable: true},
	domain.Field{Name: "city", Type: domain.TypeString, Nullable: true},
)

func changeSchema() domain.Schema {
	return domain.NewSchema(append(append([]domain.Field(nil), stored.Fields...),
		domain.Field{Name: domain.ChangeSequenceColumn, Type: domain.TypeInt64},
		domain.Field{Name: domain.ChangeDeleteColumn, Type: domain.TypeBool},
		domain.Field{Name: domain.ChangeTruncateColumn, Type: domain.TypeBool})...)
}

func batchOf(t testing.TB, cs []genChange) *domain.Batch {
	t.Helper()
	b := domain.NewBatch(changeSchema(), len(cs))
	for _, c := range cs {
		if err := b.AppendRow(domain.Int(c.key), domain.String(c.name), domain.String(c.city), domain.Int(c.seq), domain.Bool(c.del), domain.Bool(c.trunc)); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// genStream makes a random change stream: keys from a small set, sequences
// mostly distinct, some repeated (exact duplicates and conflicting ties),
// deletes, and truncates when allowed; then shuffled.
func genStream(r *rand.Rand, n int, truncates bool) []genChange {
	names := []string{"ann", "bob", "cid"}
	cities := []string{"oslo", "rome"}
	var out []genChange
	for i := 0; i < n; i++ {
		c := genChange{key: int64(r.Intn(8)), seq: int64(r.Intn(n * 2)), name: names[r.Intn(3)], city: cities[r.Intn(2)]}
		switch x := r.Intn(20); {
		case x < 3:
			c.del = true
		case x == 3 && truncates:
			c.trunc = true
		case x < 6 && len(out) > 0:
			c = out[r.Intn(len(out))] // an exact duplicate
		}
		out = append(out, c)
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	for i := range out {
		out[i].sourceIndex = i
	}
	return out
}

// sortedBySeq returns the changes in sequence order, ties in source order.
func sortedBySeq(cs []genChange) []genChange {
	out := append([]genChange(nil), cs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// refSCD1 folds the sorted changes: the table the stream must give.
func refSCD1(cs []genChange) [][]domain.Value {
	type st struct {
		seq  int64
		row  []domain.Value
		live bool
	}
	m := map[int64]*st{}
	floor, hasFloor := int64(0), false
	for _, c := range sortedBySeq(cs) {
		if c.trunc {
			floor, hasFloor = c.seq, true
			for k, e := range m {
				if e.seq < floor {
					delete(m, k)
				}
			}
			continue
		}
		if hasFloor && c.seq < floor {
			continue
		}
		e := m[c.key]
		if e != nil && c.seq < e.seq {
			continue
		}
		m[c.key] = &st{seq: c.seq, live: !c.del, row: []domain.Value{domain.Int(c.key), domain.String(c.name), domain.String(c.city)}}
	}
	var keys []int64
	for k, e := range m {
		if e.live {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var rows [][]domain.Value
	for _, k := range keys {
		rows = append(rows, m[k].row)
	}
	return rows
}

// refSCD2 builds each key's history from its sorted changes, one per
// sequence (the later in source order), with history tracked on tracked
// (column indexes; nil for all).
func refSCD2(cs []genChange, tracked []int) [][]domain.Value {
	byKey := map[int64][]genChange{}
	for _, c := range sortedBySeq(cs) {
		l := byKey[c.key]
		if n := len(l); n > 0 && l[n-1].seq == c.seq {
			l[n-1] = c
		} else {
			l = append(l, c)
		}
		byKey[c.key] = l
	}
	if tracked == nil {
		tracked = []int{0, 1, 2}
	}
	var keys []int64
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var rows [][]domain.Value
	for _, k := range keys {
		var vs [][]domain.Value
		open := -1
		for _, c := range byKey[k] {
			row := []domain.Value{domain.Int(c.key), domain.String(c.name), domain.String(c.city)}
			switch {
			case c.del:
				if open >= 0 {
					vs[open][4] = domain.Int(c.seq)
					open = -1
				}
			case open >= 0 && sameAt(vs[open], row, tracked):
				copy(vs[open], row)
			default:
				if open >= 0 {
					vs[open][4] = domain.Int(c.seq)
				}
				vs = append(vs, append(row, domain.Int(c.seq), domain.Null()))
				open = len(vs) - 1
			}
		}
		rows = append(rows, vs...)
	}
	return rows
}

func sameAt(a, b []domain.Value, idx []int) bool {
	for _, j := range idx {
		if !a[j].Equal(b[j]) {
			return false
		}
	}
	return true
}

func tableRows(t testing.TB, s *State) [][]domain.Value {
	t.Helper()
	var rows [][]domain.Value
	if err := s.Rows(3, func(b *domain.Batch) error {
		rows = append(rows, b.Rows()...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}

// foldFeed applies a feed to a table kept by row identity (key, and the
// version's start for SCD 2), as a downstream reader of the feed would.
func foldFeed(t testing.TB, table map[string][]domain.Value, feed *domain.Batch, scd int) {
	t.Helper()
	for _, row := range feed.Rows() {
		vals, typ := row[:len(row)-1], row[len(row)-1].AsString()
		id := vals[0].String()
		if scd == 2 {
			id += "@" + vals[3].String()
		}
		switch typ {
		case Insert, UpdatePostimage:
			table[id] = vals
		case Delete, UpdatePreimage:
			if !rowsEqual(table[id], vals) {
				t.Fatalf("feed %s of %v, but the table holds %v", typ, vals, table[id])
			}
			if typ == Delete {
				delete(table, id)
			}
		}
	}
}

func sortedTable(table map[string][]domain.Value) [][]domain.Value {
	var rows [][]domain.Value
	for _, r := range table {
		rows = append(rows, r)
	}
	// in table order: by key, then (SCD 2) by __START_AT
	sort.Slice(rows, func(i, j int) bool {
		if c := domain.Compare(rows[i][0], rows[j][0]); c != 0 || len(rows[i]) < 4 {
			return c < 0
		}
		return domain.Compare(rows[i][3], rows[j][3]) < 0
	})
	return rows
}

var valueCmp = cmp.Comparer(func(a, b domain.Value) bool { return a.Equal(b) })

// TestApplyEqualsSortedFold: for random change streams split into random
// batches, the table equals the fold of the sorted changes; replaying the
// recorded deltas gives the same table; the change feed, folded, gives it
// too; and applying a batch again changes nothing. Each holds with every
// key in memory, and with memory budgets that make the states spill all or
// some of their keys after each batch.
func TestApplyEqualsSortedFold(t *testing.T) {
	cases := []struct {
		name    string
		scd     int
		tracked []string
	}{
		{"scd1", 1, nil},
		{"scd2", 2, nil},
		{"scd2 tracked on name", 2, []string{"name"}},
	}
	for _, tc := range cases {
		for _, budget := range []int64{0, 1, 500} {
			t.Run(fmt.Sprintf("%s budget %d", tc.name, budget), func(t *testing.T) { testSortedFold(t, tc.scd, tc.tracked, budget) })
		}
	}
}

func testSortedFold(t *testing.T, scd int, tracked []string, budget int64) {
	tc := struct {
		scd     int
		tracked []string
	}{scd, tracked}
	trials := 300
	if budget > 0 {
		trials = 25 // a spill is a database opened and removed
	}
	spilled := 0
	{
		{
			for trial := 0; trial < trials; trial++ {
				r := rand.New(rand.NewSource(int64(trial)))
				stream := genStream(r, 1+r.Intn(60), tc.scd == 1)
				info := domain.ChangeInfo{Keys: []string{"id"}, SCDType: tc.scd, SequenceType: domain.TypeInt64, TombstoneGCSeconds: 1 << 40}
				if tc.tracked != nil {
					info.TrackHistory = &domain.ColumnSet{Columns: tc.tracked}
				}
				live, err := New(info, stored)
				if err != nil {
					t.Fatal(err)
				}
				replayed, _ := New(info, stored)
				for _, st := range []*State{live, replayed} {
					st.SpillBeyond(budget, t.TempDir())
					t.Cleanup(func() {
						if err := st.Close(); err != nil {
							t.Error(err)
						}
					})
				}
				feedTable := map[string][]domain.Value{}
				now := time.Unix(1_700_000_000, 0)
				for rest := stream; len(rest) > 0; {
					n := 1 + r.Intn(len(rest))
					batch := batchOf(t, rest[:n])
					rest = rest[n:]
					before := live.Fingerprint()
					res, err := live.Apply(batch, nil, now)
					if err != nil {
						t.Fatalf("trial %d: %v", trial, err)
					}
					if res.Delta.Len() > 0 && live.Fingerprint() == before {
						t.Fatalf("trial %d: the state changed and its fingerprint did not", trial)
					}
					feed, err := replayed.Replay(res.Delta, now, true)
					if err != nil {
						t.Fatalf("trial %d: replay: %v", trial, err)
					}
					foldFeed(t, feedTable, feed, tc.scd)
					if live.Fingerprint() != replayed.Fingerprint() {
						t.Fatalf("trial %d: the replayed state's fingerprint %s differs from the live one's %s", trial, replayed.Fingerprint(), live.Fingerprint())
					}
					again, err := live.Apply(batch, nil, now)
					if err != nil {
						t.Fatal(err)
					}
					if again.Delta.Len() != 0 {
						t.Fatalf("trial %d: applying a batch twice recorded %d more changes", trial, again.Delta.Len())
					}
					spilled += live.Spilled()
				}
				var want [][]domain.Value
				if tc.scd == 1 {
					want = refSCD1(stream)
				} else {
					var tracked []int
					for _, c := range tc.tracked {
						tracked = append(tracked, stored.Index(c))
					}
					want = refSCD2(stream, tracked)
				}
				got := tableRows(t, live)
				if diff := cmp.Diff(want, got, valueCmp); diff != "" {
					t.Fatalf("trial %d: table differs from the sorted fold (-want +got):\n%s\nstream: %+v", trial, diff, stream)
				}
				if diff := cmp.Diff(got, tableRows(t, replayed), valueCmp); diff != "" {
					t.Fatalf("trial %d: replayed table differs (-live +replayed):\n%s", trial, diff)
				}
				if diff := cmp.Diff(got, sortedTable(feedTable), valueCmp); diff != "" {
					t.Fatalf("trial %d: the folded feed differs from the table (-table +feed):\n%s", trial, diff)
				}
			}
		}
	}
	if budget > 0 && spilled == 0 {
		t.Errorf("a budget of %d bytes spilled no key", budget)
	}
}

func TestNewRefusesBadSpecs(t *testing.T) {
	cases := []struct {
		info domain.ChangeInfo
		code domain.Code
	}{
		{domain.ChangeInfo{Keys: []string{"id"}, SCDType: 3, SequenceType: domain.TypeInt64}, domain.CodeCDCInvalidClause},
		{domain.ChangeInfo{SCDType: 1, SequenceType: domain.TypeInt64}, domain.CodeCDCInvalidClause},
		{domain.ChangeInfo{Keys: []string{"nope"}, SCDType: 1, SequenceType: domain.TypeInt64}, domain.CodeCDCUnknownColumn},
		{domain.ChangeInfo{Keys: []string{"id"}, SCDType: 2, SequenceType: domain.TypeInt64, TrackHistory: &domain.ColumnSet{Columns: []string{"zip"}}}, domain.CodeCDCUnknownColumn},
		{domain.ChangeInfo{Keys: []string{"id"}, SCDType: 1, SequenceType: domain.MapOf(domain.TypeString, domain.TypeInt64)}, domain.CodeCDCSequenceType},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, err := New(tc.info, stored)
			if domain.CodeOf(err) != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
		})
	}
}

// TestHistoryRoom: a key changing again in the batch it changed in grows
// its history's room in large steps; a fold of the log (unstamped changes)
// and a key changed once per batch grow it as append does.
func TestHistoryRoom(t *testing.T) {
	info := domain.ChangeInfo{SCDType: 2, Keys: []string{"id"}, SequenceType: domain.TypeInt64}
	now := time.Unix(1_700_000_000, 0)
	s, err := New(info, stored)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Apply(batchOf(t, []genChange{{key: 1, seq: 1, name: "a"}, {key: 1, seq: 2, name: "b"}, {key: 2, seq: 1, name: "a"}}), nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(batchOf(t, []genChange{{key: 2, seq: 2, name: "b"}}), nil, now); err != nil {
		t.Fatal(err)
	}
	room := func(s *State, key int64) int {
		for _, h := range s.two {
			if s.keyOf(h.id)[0].AsInt() == key {
				return cap(h.changes)
			}
		}
		t.Fatalf("no history of key %d", key)
		return 0
	}
	if got := room(s, 1); got < 8 {
		t.Errorf("a key changed twice in a batch has room for %d changes, want at least 8", got)
	}
	if got := room(s, 2); got > 2 {
		t.Errorf("a key changed once a batch has room for %d changes, want 2", got)
	}
	folded, err := New(info, stored)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := folded.Replay(res.Delta, now, false); err != nil {
		t.Fatal(err)
	}
	if got := room(folded, 1); got > 2 {
		t.Errorf("a fold of the log gives two changes room for %d, want 2", got)
	}
}

// TestPutOnEveryCore: an SCD 2 batch put on two goroutines records the
// same delta, row for row, and leaves the same state as one put in one
// goroutine, for random streams over a few or many keys split into random
// batches: with and without ignoring NULL updates (names are NULL at
// times), with every key in memory or most of them spilled, and with a
// NULL key somewhere, which both refuse alike.
func TestPutOnEveryCore(t *testing.T) {
	defer func(at int) { putInParallelAtLeast = at }(putInParallelAtLeast)
	for _, ignore := range []*domain.ColumnSet{nil, {Columns: []string{"name"}}} {
		for _, budget := range []int64{0, 500} {
			trials := 100
			if budget > 0 {
				trials = 10 // a spill is a database opened and removed
			}
			for trial := 0; trial < trials; trial++ {
				testPutOnEveryCore(t, trial, ignore, budget)
			}
		}
	}
}

func testPutOnEveryCore(t *testing.T, trial int, ignore *domain.ColumnSet, budget int64) {
	r := rand.New(rand.NewSource(int64(trial)))
	stream := genStream(r, 100+r.Intn(400), false)
	keys := []int{8, 500}[r.Intn(2)]
	for i := range stream {
		stream[i].key = int64(r.Intn(keys))
		if r.Intn(4) == 0 {
			stream[i].name = "" // NULL
		}
	}
	if trial%5 == 4 {
		stream[r.Intn(len(stream))].key = -1 // NULL
	}
	info := domain.ChangeInfo{Keys: []string{"id"}, SCDType: 2, SequenceType: domain.TypeInt64}
	var states [2]*State
	for i := range states {
		s, err := New(info, stored)
		if err != nil {
			t.Fatal(err)
		}
		s.SpillBeyond(budget, t.TempDir())
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		states[i] = s
	}
	serial, parallel := states[0], states[1]
	now := time.Unix(1_700_000_000, 0)
	for rest := stream; len(rest) > 0; {
		n := 1 + r.Intn(len(rest))
		batch := batchWithNulls(t, rest[:n])
		rest = rest[n:]
		putInParallelAtLeast = math.MaxInt
		want, wantErr := serial.Apply(batch, ignore, now)
		putInParallelAtLeast = 1
		got, gotErr := parallel.Apply(batch, ignore, now)
		if wantErr != nil || gotErr != nil {
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Fatalf("trial %d: one goroutine fails with %v, two with %v", trial, wantErr, gotErr)
			}
			return // a failed batch leaves a state to drop
		}
		if diff := cmp.Diff(want.Delta.Rows(), got.Delta.Rows(), valueCmp); diff != "" {
			t.Fatalf("trial %d: the delta put on two goroutines differs (-one +two):\n%s", trial, diff)
		}
		if want.Upserted != got.Upserted || want.Deleted != got.Deleted {
			t.Fatalf("trial %d: counted %d upserts and %d deletes on two goroutines, %d and %d on one", trial, got.Upserted, got.Deleted, want.Upserted, want.Deleted)
		}
		if serial.Fingerprint() != parallel.Fingerprint() {
			t.Fatalf("trial %d: the fingerprints differ", trial)
		}
	}
	if diff := cmp.Diff(tableRows(t, serial), tableRows(t, parallel), valueCmp); diff != "" {
		t.Fatalf("trial %d: the tables differ (-one +two):\n%s", trial, diff)
	}
}

// batchWithNulls is batchOf with a negative key and an empty name as NULL.
func batchWithNulls(t testing.TB, cs []genChange) *domain.Batch {
	t.Helper()
	b := domain.NewBatch(changeSchema(), len(cs))
	for _, c := range cs {
		key, name := domain.Int(c.key), domain.String(c.name)
		if c.key < 0 {
			key = domain.Null()
		}
		if c.name == "" {
			name = domain.Null()
		}
		if err := b.AppendRow(key, name, domain.String(c.city), domain.Int(c.seq), domain.Bool(c.del), domain.Bool(c.trunc)); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// TestOnPartsRaisesPanics: a panic on a goroutine of onParts is raised
// again in its caller, where a flow's recover can fail the micro-batch.
func TestOnPartsRaisesPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "part 1" {
			t.Errorf("recovered %v, want the panic of part 1", r)
		}
	}()
	onParts(2, func(part int) {
		if part == 1 {
			panic("part 1")
		}
	})
	t.Error("onParts returned after a part panicked")
}
