package sources

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// csvReader makes a reader with the source's dialect: a delimiter, double
// quotes around fields, "" for a quote inside one.
func (o *FileOptions) csvReader(data string) *csv.Reader {
	r := csv.NewReader(strings.NewReader(data))
	r.Comma = o.Delimiter
	r.FieldsPerRecord = -1 // checked against the header here, with a better message
	r.ReuseRecord = true
	return r
}

// decodeCSV adds records [from, to) of a CSV file to b (to < 0: to the end).
// Records are numbered after the header. Without a declared schema every
// column is a string, unless InferSchema asks for bigint, double and boolean
// where every value of the batch reads as one.
func (o *FileOptions) decodeCSV(b *builder, data string, from, to int) error {
	r := o.csvReader(data)
	var header []string
	if o.Header {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			line, _ := r.FieldPos(0)
			b.currentLine = line
			return b.malformed("header: " + csvReason(err))
		}
		header = append([]string(nil), rec...)
	}
	for n := 0; to < 0 || n < to; n++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		line, _ := r.FieldPos(0)
		b.currentLine = line
		if n < from {
			continue
		}
		if err != nil {
			if berr := b.badRecord(strings.Join(rec, string(o.Delimiter)), csvReason(err)); berr != nil {
				return berr
			}
			continue
		}
		if header == nil {
			header = make([]string, len(rec))
			for i := range rec {
				header[i] = "_c" + strconv.Itoa(i) // Spark's names for headerless columns
			}
		}
		if len(rec) != len(header) {
			reason := fmt.Sprintf("the record has %d fields, the header %d", len(rec), len(header))
			if berr := b.badRecord(strings.Join(rec, string(o.Delimiter)), reason); berr != nil {
				return berr
			}
			continue
		}
		for i, field := range rec {
			if field == "" {
				b.set(header[i], domain.Null())
				continue
			}
			b.set(header[i], o.csvValue(field, b.declared != nil))
		}
		if err := b.endRow(); err != nil {
			return err
		}
	}
	return nil
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
	if f, err := strconv.ParseFloat(field, 64); err == nil {
		return domain.Float(f)
	}
	switch strings.ToLower(field) {
	case "true":
		return domain.Bool(true)
	case "false":
		return domain.Bool(false)
	}
	return domain.String(field)
}

func csvReason(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("column %d: %v", pe.Column, pe.Err)
	}
	return err.Error()
}

// countCSVRecords counts the records of a CSV file after the header.
func (o *FileOptions) countCSVRecords(data string) (int, error) {
	r := o.csvReader(data)
	n := 0
	for {
		_, err := r.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if err != nil && !errors.As(err, &pe) {
			return 0, err
		}
		n++
	}
	if o.Header && n > 0 {
		n--
	}
	return n, nil
}
