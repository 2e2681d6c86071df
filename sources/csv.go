package sources

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain"
)

// validCSVDelimiter reports whether encoding/csv takes r as a delimiter.
func validCSVDelimiter(r rune) bool {
	return r != 0 && r != '"' && r != '\r' && r != '\n' && utf8.ValidRune(r) && r != utf8.RuneError
}

// csvReader makes a reader with the source's dialect: a delimiter, double
// quotes around fields, "" for a quote inside one.
func (o *FileOptions) csvReader(data string) *csv.Reader {
	r := csv.NewReader(strings.NewReader(data))
	r.Comma = o.Delimiter
	r.FieldsPerRecord = -1 // checked against the header here, with a better message
	r.ReuseRecord = true
	return r
}

// csvRead reads the next record; line is where it starts in the file (also
// for a record that does not parse) and raw its text as written, for the
// rescued data.
func csvRead(r *csv.Reader, data string) (rec []string, line int, raw string, err error) {
	start := r.InputOffset()
	rec, err = r.Read()
	if err == io.EOF {
		return nil, 0, "", err
	}
	raw = strings.TrimRight(data[start:r.InputOffset()], "\r\n")
	raw = strings.TrimLeft(raw, "\r\n") // blank lines skipped before the record
	var pe *csv.ParseError
	switch {
	case errors.As(err, &pe):
		line = pe.StartLine
	case len(rec) > 0:
		line, _ = r.FieldPos(0)
	}
	return rec, line, raw, err
}

// decodeCSV adds the records of CSV data to b; with Header, its first record
// names the columns. Without a declared schema every
// column is a string, unless InferSchema asks for bigint, double and boolean
// where every value of the batch reads as one. Fields are matched to the
// columns of a declared schema by the header's names, or without a header by
// position.
func (o *FileOptions) decodeCSV(b *builder, data string) error {
	r := o.csvReader(data)
	b.reserve(strings.Count(data, "\n") + 1)
	var header []string
	if o.Header {
		rec, line, _, err := csvRead(r, data)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			b.currentLine = b.lineBase + line
			return b.malformed("header: " + csvReason(err))
		}
		header = csvHeader(rec)
	}
	for {
		rec, line, raw, err := csvRead(r, data)
		if err == io.EOF {
			return nil
		}
		b.currentLine = b.lineBase + line
		if err != nil {
			if berr := b.badRecord(raw, csvReason(err)); berr != nil {
				return berr
			}
			continue
		}
		if header == nil {
			header = make([]string, len(rec))
			switch {
			case b.declared != nil:
				// Without a header, a declared schema names the fields
				// by position (as Spark reads them).
				header = b.declared.Names()
			default:
				for i := range rec {
					header[i] = "_c" + strconv.Itoa(i) // Spark's names for headerless columns
				}
			}
		}
		if len(rec) != len(header) {
			what := "the header"
			if !o.Header && b.declared != nil {
				what = "the declared schema"
			}
			reason := fmt.Sprintf("the record has %d fields, %s %d", len(rec), what, len(header))
			if berr := b.badRecord(raw, reason); berr != nil {
				return berr
			}
			continue
		}
		for i, field := range rec {
			if field == "" {
				b.set(header[i], domain.Null())
				continue
			}
			b.setRaw(header[i], o.csvValue(field, b.declared != nil), field)
		}
		if err := b.endRow(); err != nil {
			return err
		}
	}
}

// csvHeader names the columns from a header record as Spark does: an empty
// name is _c<i>, and names given more than once (ignoring case) get their
// position appended, so that no column hides another.
func csvHeader(rec []string) []string {
	header := make([]string, len(rec))
	count := map[string]int{}
	for i, name := range rec {
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

func csvReason(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("column %d: %v", pe.Column, pe.Err)
	}
	return err.Error()
}
