package sources

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
)

// csvDialect is how a CSV file is written: Spark's options sep, quote,
// escape and multiLine.
type csvDialect struct {
	delim     rune
	quote     rune // -1: fields are never quoted
	escape    rune // -1: no escape character; "" inside quotes is a quote either way
	multiLine bool // a quoted field may hold line breaks
}

func (o *FileOptions) dialect() csvDialect {
	d := csvDialect{delim: o.Delimiter, quote: o.Quote, escape: o.Escape, multiLine: o.MultiLine}
	if d.delim == 0 {
		d.delim = ','
	}
	if d.quote == 0 {
		d.quote = '"'
	}
	if d.escape == 0 {
		d.escape = '\\'
	}
	return d
}

// csvField is one field of a record: its text, unescaped, and whether it was
// quoted (a quoted empty field is an empty string, an unquoted one NULL).
type csvField struct {
	text   string
	quoted bool
}

// csvParser reads records from CSV text.
type csvParser struct {
	d      csvDialect
	data   string
	pos    int // where the next record starts
	line   int // the 1-based line at pos
	fields []csvField
	buf    []byte
}

// errCSVUnterminated is a quoted field without its closing quote;
// errCSVAfterQuote text between a closing quote and the delimiter.
var (
	errCSVUnterminated = errors.New("a quoted field has no closing quote")
	errCSVAfterQuote   = errors.New("text follows the closing quote of a field")
)

// skipLine moves past the rest of the current line.
func (p *csvParser) skipLine() {
	if i := strings.IndexByte(p.data[p.pos:], '\n'); i >= 0 {
		p.pos += i + 1
		p.line++
		return
	}
	p.pos = len(p.data)
}

// next reads the next record, skipping blank lines. It returns the line the
// record starts on and its text; ok is false at the end of the data. A
// record that does not parse returns err (the parser has moved past it: to
// the end of its line, or with multiLine to the end of the data for an
// unterminated quote).
func (p *csvParser) next() (line int, raw string, ok bool, err error) {
	for p.pos < len(p.data) {
		eol := strings.IndexByte(p.data[p.pos:], '\n')
		end := len(p.data)
		if eol >= 0 {
			end = p.pos + eol
		}
		if strings.TrimRight(p.data[p.pos:end], "\r") != "" {
			break
		}
		p.pos, p.line = end+1, p.line+1
	}
	if p.pos >= len(p.data) {
		return 0, "", false, nil
	}
	start, line := p.pos, p.line
	p.fields = p.fields[:0]
	err = p.record()
	raw = strings.TrimRight(p.data[start:p.pos], "\r\n")
	return line, raw, true, err
}

// record reads the fields of one record from p.pos, leaving p.pos after its
// line break.
func (p *csvParser) record() error {
	d := p.d
	for {
		quoted := false
		p.buf = p.buf[:0]
		if d.quote >= 0 && strings.HasPrefix(p.data[p.pos:], string(d.quote)) {
			quoted = true
			p.pos += utf8.RuneLen(d.quote)
			if err := p.quotedText(); err != nil {
				return err
			}
		}
		// unquoted text up to the delimiter or the end of the line
		for p.pos < len(p.data) {
			r, n := utf8.DecodeRuneInString(p.data[p.pos:])
			if r == d.delim || r == '\n' {
				break
			}
			if quoted {
				// only the line break may follow a closing quote (or the
				// delimiter, above): a CR of CRLF is no part of the field
				if r == '\r' && (p.pos+n == len(p.data) || p.data[p.pos+n] == '\n') {
					p.pos += n
					continue
				}
				p.skipLine()
				return errCSVAfterQuote
			}
			p.buf = append(p.buf, p.data[p.pos:p.pos+n]...)
			p.pos += n
		}
		text := string(p.buf)
		if !quoted {
			text = strings.TrimSuffix(text, "\r")
		}
		p.fields = append(p.fields, csvField{text: text, quoted: quoted})
		if p.pos >= len(p.data) {
			return nil
		}
		r, n := utf8.DecodeRuneInString(p.data[p.pos:])
		p.pos += n
		if r == '\n' {
			p.line++
			return nil
		}
	}
}

// quotedText reads a quoted field's text after its opening quote, through
// its closing quote.
func (p *csvParser) quotedText() error {
	d := p.d
	for p.pos < len(p.data) {
		r, n := utf8.DecodeRuneInString(p.data[p.pos:])
		switch {
		case r == d.quote:
			if strings.HasPrefix(p.data[p.pos+n:], string(d.quote)) { // "" is a quote
				p.buf = utf8.AppendRune(p.buf, d.quote)
				p.pos += 2 * n
				continue
			}
			p.pos += n
			return nil
		case r == d.escape && d.escape >= 0:
			if next, m := utf8.DecodeRuneInString(p.data[p.pos+n:]); m > 0 && (next == d.quote || next == d.escape) {
				p.buf = utf8.AppendRune(p.buf, next)
				p.pos += n + m
				continue
			}
		case r == '\r' && d.multiLine && strings.HasPrefix(p.data[p.pos+n:], "\n"):
			p.pos += n // a line break inside quotes is \n, whatever the file's
			continue
		case r == '\n':
			if !d.multiLine {
				// The record ends with its line: the next line is the
				// next record, whatever this one lacks.
				p.pos += n
				p.line++
				return errCSVUnterminated
			}
			p.line++
		}
		p.buf = append(p.buf, p.data[p.pos:p.pos+n]...)
		p.pos += n
	}
	return errCSVUnterminated
}

// validCSVDelimiter reports whether r can separate CSV fields.
func validCSVDelimiter(r rune) bool {
	return r != 0 && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}

// csvMark reports whether r can be a quote or an escape: off (-1), or an
// ASCII character other than a line break (planning finds the ends of
// multi-line records byte by byte).
func csvMark(r rune) bool { return r == -1 || (r > 0 && r < utf8.RuneSelf && r != '\n' && r != '\r') }

// decodeCSV adds the records of CSV data to b; with Header, its first record
// names the columns. Without a declared schema every column is a string,
// unless InferSchema asks for bigint, double and boolean where every value
// of the batch reads as one. Fields are matched to the columns of a declared
// schema by the header's names, or without a header by position. An
// unquoted empty field, or one equal to NullValue, is NULL; a quoted empty
// field is an empty string.
func (o *FileOptions) decodeCSV(b *builder, data string) error {
	p := &csvParser{d: o.dialect(), data: data, line: 1}
	b.reserve(strings.Count(data, "\n") + 1)
	var header []string
	if o.Header {
		line, _, ok, err := p.next()
		if !ok {
			return nil
		}
		if err != nil {
			b.currentLine = b.lineBase + line
			return b.malformed("header: " + err.Error())
		}
		header = csvHeader(p.fields)
	}
	for {
		line, raw, ok, err := p.next()
		if !ok {
			return nil
		}
		b.currentLine = b.lineBase + line
		if err != nil {
			if berr := b.badRecord(raw, err.Error()); berr != nil {
				return berr
			}
			continue
		}
		if header == nil {
			header = make([]string, len(p.fields))
			switch {
			case b.declared != nil:
				// Without a header, a declared schema names the fields
				// by position (as Spark reads them).
				header = b.declared.Names()
			default:
				for i := range p.fields {
					header[i] = "_c" + strconv.Itoa(i) // Spark's names for headerless columns
				}
			}
		}
		if len(p.fields) != len(header) {
			what := "the header"
			if !o.Header && b.declared != nil {
				what = "the declared schema"
			}
			reason := fmt.Sprintf("the record has %d fields, %s %d", len(p.fields), what, len(header))
			if berr := b.badRecord(raw, reason); berr != nil {
				return berr
			}
			continue
		}
		for i, f := range p.fields {
			if !f.quoted && (f.text == "" || f.text == o.NullValue) {
				b.set(header[i], domain.Null())
				continue
			}
			b.setRaw(header[i], o.csvValue(f.text, b.declared != nil), f.text)
		}
		if err := b.endRow(); err != nil {
			return err
		}
	}
}

// csvHeader names the columns from a header record as Spark does: an empty
// name is _c<i>, and names given more than once (ignoring case) get their
// position appended, so that no column hides another.
func csvHeader(rec []csvField) []string {
	header := make([]string, len(rec))
	count := map[string]int{}
	for i, f := range rec {
		name := f.text
		if name == "" {
			name = "_c" + strconv.Itoa(i)
		}
		header[i] = name
		count[foldName(name)]++
	}
	for i, name := range header {
		if count[foldName(name)] > 1 {
			header[i] = name + strconv.Itoa(i)
		}
	}
	return header
}

// csvValue is a field as a value: text for a declared schema (the builder
// converts it), or the narrowest type when inferring.
func (o *FileOptions) csvValue(field string, declared bool) domain.Value {
	if declared || !o.InferSchema {
		return domain.String(field)
	}
	if i, err := strconv.ParseInt(field, 10, 64); err == nil {
		return domain.Int(i)
	}
	if decimalText(field) {
		if f, err := strconv.ParseFloat(field, 64); err == nil {
			return domain.Float(f)
		}
	}
	switch strings.ToLower(field) {
	case "true":
		return domain.Bool(true)
	case "false":
		return domain.Bool(false)
	}
	return domain.String(field)
}

// decimalText reports whether a field reads as a double when inferring: a
// decimal number (not hexadecimal, no underscores), or Spark's spellings of
// NaN and infinities.
func decimalText(s string) bool {
	switch s {
	case "NaN", "Inf", "+Inf", "-Inf", "Infinity", "+Infinity", "-Infinity":
		return true
	}
	digits := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			return false
		}
	}
	return digits
}
