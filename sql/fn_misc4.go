package sql

import (
	"unicode"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

// window_time, monotonically_increasing_id, sentences, and session_window
// outside GROUP BY.

func init() {
	register(map[string]builtin{
		"window_time":                 {minArgs: 1, maxArgs: 1, compile: compileWindowTime},
		"monotonically_increasing_id": {minArgs: 0, maxArgs: 0, compile: compileMonotonicID},
		"sentences":                   {minArgs: 1, maxArgs: 3, compile: compileSentences},
		"session_window":              {minArgs: 2, maxArgs: 2, compile: compileSessionWindow},
	})
}

// compileSessionWindow: session_window(ts, gap) is a GROUP BY key (see
// plan_session.go), which the aggregation plans; anywhere else it has no
// rows to make sessions of.
func compileSessionWindow(_ *compiler, e *syntax.FuncCall, name string) (node, error) {
	return nil, exprErr(domain.CodeUnsupportedQuery, e.Pos, "%s groups rows into sessions: use it in GROUP BY (GROUP BY user, %s(ts, '5 minutes'))", name, name)
}

// compileWindowTime: window_time(w) is the time of a window struct (of
// window()): its end less one microsecond, the last instant inside it, so
// that a windowed aggregate's rows can be windowed again.
func compileWindowTime(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	t := x.typ()
	end := -1
	if t.Kind == domain.KindStruct && len(t.Fields) == 2 && t.Fields[0].Name == "start" && t.Fields[1].Name == "end" &&
		t.Fields[1].Type.Kind == domain.KindTimestamp {
		end = 1
	}
	if end < 0 {
		return nil, exprErr(domain.CodeDatatypeMismatch, e.Args[0].Position(), "%s needs a window (the struct<start, end> that window() makes), found %s", name, t)
	}
	rt := t.Fields[1].Type
	return &fnNode{args: []node{x}, t: rt, body: func(out *domain.Column, a []*domain.Column) error {
		for i := range out.Ints {
			if isNullAt(out.Nulls, i) {
				continue
			}
			if e := a[0].Values[i].Fields()[end]; !e.IsNull() {
				out.Ints[i] = e.AsInt() - 1
				continue
			}
			if out.Nulls == nil {
				out.Nulls = make([]bool, len(out.Ints))
			}
			out.Nulls[i] = true
		}
		return nil
	}}, nil
}

// monotonicIDNode is monotonically_increasing_id(): Spark's partition
// index in the upper 31 bits and the row's position within its partition in
// the lower 33. A batch that sluice evaluates is one partition, the first:
// the ids are 0, 1, 2, ... in each micro-batch (of a streaming flow) or
// query (of a materialized view), unique and increasing within it, as
// Spark's are within one.
type monotonicIDNode struct{}

func compileMonotonicID(*compiler, *syntax.FuncCall, string) (node, error) {
	return monotonicIDNode{}, nil
}

func (monotonicIDNode) typ() domain.Type { return domain.TypeInt64 }
func (monotonicIDNode) mayFail() bool    { return false }
func (monotonicIDNode) eval(b *domain.Batch) (*domain.Column, error) {
	out := newCol(domain.KindInt64, b.Len())
	for i := range out.Ints {
		out.Ints[i] = int64(i)
	}
	return out, nil
}

// compileSentences: sentences(s[, language, country]) splits s into
// sentences and each sentence into its words, an array of arrays of
// strings, as Java's BreakIterator does for the language given (English
// by default): a sentence ends after . ! or ? followed by a space, or at a
// line break; a word is a run of letters and digits that an apostrophe or
// a point between letters (don't, e.g) or a point or comma between digits
// (3.14, 1,000) does not break; punctuation is not a word.
func compileSentences(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.stringArgs(e, name)
	if err != nil {
		return nil, err
	}
	return &fnNode{args: args[:1], t: domain.ListOf(domain.ListOf(domain.TypeString)), body: func(out *domain.Column, a []*domain.Column) error {
		for i, s := range a[0].Strs {
			if isNullAt(out.Nulls, i) {
				continue
			}
			var result []domain.Value
			for _, sentence := range splitSentences(s) {
				words := []domain.Value{}
				for _, w := range sentenceWords(sentence) {
					words = append(words, domain.String(w))
				}
				result = append(result, domain.List(words...))
			}
			out.Values[i] = domain.List(result...)
		}
		return nil
	}}, nil
}

// splitSentences cuts s after each sentence terminator run (. ! ?) that
// spaces follow (the spaces stay with the sentence), and after line breaks.
func splitSentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' || c == '\r':
			j := i + 1
			for j < len(s) && (s[j] == '\n' || s[j] == '\r') {
				j++
			}
			out, start, i = append(out, s[start:j]), j, j
			continue
		case c == '.' || c == '!' || c == '?':
			j := i + 1
			for j < len(s) && (s[j] == '.' || s[j] == '!' || s[j] == '?' || s[j] == '"' || s[j] == '\'' || s[j] == ')') {
				j++
			}
			k := j
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k == len(s) || (k > j && s[k] != '\n' && s[k] != '\r') {
				out, start, i = append(out, s[start:k]), k, k
				continue
			}
			i = j
			continue
		}
		i++
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// sentenceWords are the words of a sentence (see compileSentences).
func sentenceWords(s string) []string {
	var out []string
	wordRune := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) }
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !wordRune(r) {
			i += n
			continue
		}
		start := i
		prev := r
		i += n
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if wordRune(r) {
				prev, i = r, i+n
				continue
			}
			next, m := utf8.DecodeRuneInString(s[i+n:])
			if m == 0 {
				break
			}
			letters := unicode.IsLetter(prev) && unicode.IsLetter(next) && (r == '\'' || r == '.' || r == '’' || r == ':')
			digits := unicode.IsDigit(prev) && unicode.IsDigit(next) && (r == '.' || r == ',' || r == ';')
			if !letters && !digits {
				break
			}
			prev, i = next, i+n+m
		}
		out = append(out, s[start:i])
	}
	return out
}
