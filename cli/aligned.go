package cli

import (
	"io"
	"strings"
	"unicode/utf8"
)

// alignedPage is how many records set the column widths of aligned output.
// Holding a page, not the whole output, keeps a large table or log streaming
// out in bounded memory; a later cell wider than its column pushes the rest
// of its line.
const alignedPage = 1000

// aligned writes records as columns for people: each column as wide as its
// widest cell among the header and the first page of records, two spaces
// between columns, right-aligned columns padded on the left, the last column
// never padded on the right.
type aligned struct {
	w      io.Writer
	header []string
	right  []bool // right-align column j (numbers); nil: none
	rule   bool   // a line of dashes under the header
	page   [][]string
	widths []int // set once the first page is out
	line   strings.Builder
}

func newAligned(w io.Writer, header []string, right []bool) *aligned {
	return &aligned{w: w, header: header, right: right, rule: true}
}

// add writes a record, or holds it while the first page fills.
func (a *aligned) add(rec []string) error {
	if a.widths != nil {
		return a.write(rec, false)
	}
	a.page = append(a.page, rec)
	if len(a.page) >= alignedPage {
		return a.flush()
	}
	return nil
}

// flush sets the widths from the header and the records held, if they are
// not set yet, and writes what is held: the header and its rule first. After
// flush every record is written as it comes (events --follow flushes once the
// log's backlog is out, so that new events show at once).
func (a *aligned) flush() error {
	if a.widths == nil {
		n := len(a.header)
		for _, rec := range a.page {
			n = max(n, len(rec))
		}
		a.widths = make([]int, n)
		for _, rec := range append([][]string{a.header}, a.page...) {
			for j, c := range rec {
				a.widths[j] = max(a.widths[j], utf8.RuneCountInString(c))
			}
		}
		if len(a.header) > 0 {
			if err := a.write(a.header, true); err != nil {
				return err
			}
		}
		if len(a.header) > 0 && a.rule {
			rule := make([]string, len(a.widths))
			for j, w := range a.widths {
				rule[j] = strings.Repeat("-", w)
			}
			if err := a.write(rule, true); err != nil {
				return err
			}
		}
	}
	for _, rec := range a.page {
		if err := a.write(rec, false); err != nil {
			return err
		}
	}
	a.page = nil
	return nil
}

// write writes one line; header lines are never right-aligned.
func (a *aligned) write(rec []string, header bool) error {
	b := &a.line
	b.Reset()
	for j, c := range rec {
		if j > 0 {
			b.WriteString("  ")
		}
		w := 0
		if j < len(a.widths) {
			w = a.widths[j]
		}
		pad := max(w-utf8.RuneCountInString(c), 0)
		switch {
		case !header && j < len(a.right) && a.right[j]:
			b.WriteString(strings.Repeat(" ", pad))
			b.WriteString(c)
		case j < len(rec)-1:
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", pad))
		default:
			b.WriteString(c)
		}
	}
	line := b.String()
	if len(rec) > 0 && rec[len(rec)-1] == "" {
		line = strings.TrimRight(line, " ") // the padding before an empty last cell
	}
	_, err := io.WriteString(a.w, line+"\n")
	return err
}
