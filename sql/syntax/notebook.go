package syntax

import (
	"strings"
)

const (
	notebookHeader  = "-- Databricks notebook source"
	notebookCommand = "-- COMMAND ----------"
	notebookMagic   = "-- MAGIC"
)

// isNotebook reports whether src is a Databricks notebook export.
func isNotebook(src string) bool {
	src = strings.TrimPrefix(src, "\ufeff")
	line, _, _ := strings.Cut(src, "\n")
	return strings.TrimSpace(line) == notebookHeader
}

// Note is something the parser did that the user may want to know about, such
// as a notebook cell it skipped.
type Note struct {
	Pos  Pos
	Text string
}

// notebook turns a notebook export into plain SQL of exactly the same length,
// so every offset, and so every line and column, stays that of the file:
//   - the header line and `%sql` lines become blanks;
//   - each `-- COMMAND ----------` line becomes a `;` (a cell boundary ends a
//     statement), and its offset is returned so errors can say "end of cell";
//   - a cell of `-- MAGIC` lines is blanked and noted, unless its magic is
//     %sql, in which case the `-- MAGIC ` prefixes are blanked and the SQL kept.
func (s *source) notebook(src string) (text string, cellEnds map[int]bool, notes []Note) {
	b := []byte(src)
	cellEnds = map[int]bool{}
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' && b[i] != '\r' {
				b[i] = ' '
			}
		}
	}
	type line struct{ start, end int } // end excludes the line break
	var lines []line
	for start := 0; start <= len(src); {
		end := strings.IndexByte(src[start:], '\n')
		if end < 0 {
			lines = append(lines, line{start, len(src)})
			break
		}
		lines = append(lines, line{start, start + end})
		start += end + 1
	}
	text1 := func(l line) string { return strings.TrimSpace(strings.TrimPrefix(src[l.start:l.end], "\ufeff")) }
	// cells: runs of lines between command lines; the header line is blanked.
	blank(lines[0].start, lines[0].end)
	cellStart := 1
	flush := func(from, to int) { // lines[from:to] form a cell
		first := -1
		for k := from; k < to; k++ {
			if text1(lines[k]) != "" {
				first = k
				break
			}
		}
		if first < 0 {
			return
		}
		if strings.HasPrefix(text1(lines[first]), notebookMagic) {
			magic := strings.TrimSpace(strings.TrimPrefix(text1(lines[first]), notebookMagic))
			if magic == "%sql" {
				for k := from; k < to; k++ {
					t := src[lines[k].start:lines[k].end]
					if idx := strings.Index(t, notebookMagic); idx >= 0 && strings.TrimSpace(t[:idx]) == "" {
						n := idx + len(notebookMagic)
						if n < len(t) && t[n] == ' ' {
							n++
						}
						blank(lines[k].start, lines[k].start+n)
					}
					if text1(lines[k]) == notebookMagic+" %sql" {
						blank(lines[k].start, lines[k].end)
					}
				}
				return
			}
			kind := magic
			if f := strings.Fields(magic); len(f) > 0 {
				kind = f[0]
			}
			notes = append(notes, Note{Pos: s.posOrig(lines[first].start), Text: "skipped notebook cell (" + kind + "), not SQL"})
			blank(lines[from].start, lines[to-1].end)
			return
		}
		for k := from; k < to; k++ {
			if text1(lines[k]) == "%sql" {
				blank(lines[k].start, lines[k].end)
			}
		}
	}
	for k := 1; k < len(lines); k++ {
		if text1(lines[k]) == notebookCommand {
			flush(cellStart, k)
			blank(lines[k].start, lines[k].end)
			idx := strings.Index(src[lines[k].start:lines[k].end], "--")
			b[lines[k].start+idx] = ';'
			cellEnds[lines[k].start+idx] = true
			cellStart = k + 1
		}
	}
	flush(cellStart, len(lines))
	return string(b), cellEnds, notes
}
