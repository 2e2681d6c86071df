package pipeline

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sources"
	"github.com/sluicehq/sluice/sql"
)

// fileRelation resolves read_files('path', format => 'json', ...) or the
// older cloud_files('path', 'json', map('header', 'true')): a file source,
// with the schema given or inferred from the files there now.
func (l *sqlLoader) fileRelation(f *sqlFile, call *sql.FuncCall, fn string, metadata bool) (sql.Relation, error) {
	fail := func(p sql.Pos, format string, args ...any) (sql.Relation, error) {
		return sql.Relation{}, &sql.Error{Code: domain.CodeSourceOptionInvalid, File: f.Path, Pos: p, Message: fmt.Sprintf(format, args...)}
	}
	var path string
	opts := map[string]string{}
	optPos := map[string]sql.Pos{}
	positional := 0
	for _, a := range call.Args {
		switch a := a.(type) {
		case *sql.NamedArg:
			v, ok := constText(a.Value)
			if !ok {
				return fail(a.Value.Position(), "the option %s of %s needs a constant value", a.Name.Name, fn)
			}
			key := strings.ToLower(a.Name.Name)
			opts[key], optPos[key] = v, a.Pos
		default:
			if fc, ok := a.(*sql.FuncCall); ok && strings.EqualFold(fc.Name.Last().Name, "map") && fn == "cloud_files" {
				for i := 0; i+1 < len(fc.Args); i += 2 {
					k, ok1 := constText(fc.Args[i])
					v, ok2 := constText(fc.Args[i+1])
					if !ok1 || !ok2 {
						return fail(fc.Pos, "the options map of cloud_files needs constant keys and values")
					}
					key := strings.ToLower(strings.TrimPrefix(k, "cloudFiles."))
					key = strings.TrimPrefix(key, "cloudfiles.")
					opts[key], optPos[key] = v, fc.Pos
				}
				continue
			}
			v, ok := constText(a)
			if !ok {
				return fail(a.Position(), "%s needs a constant string path", fn)
			}
			switch positional {
			case 0:
				path = v
			case 1:
				opts["format"], optPos["format"] = v, a.Position()
			default:
				return fail(a.Position(), "%s takes the path and the format, then options by name", fn)
			}
			positional++
		}
	}
	if path == "" {
		return fail(call.Pos, "%s needs a path, as in %s('data/events', format => 'json')", fn, fn)
	}
	fo := sources.FileOptions{Format: strings.ToLower(opts["format"])}
	delete(opts, "format")
	if fo.Format == "" {
		fo.Format = formatFromPath(path)
		if fo.Format == "" {
			return fail(call.Pos, "%s needs format => 'json', 'csv', 'parquet' or 'text' for %s", fn, path)
		}
	}
	var schema *domain.Schema
	for _, key := range sortedOptionKeys(opts) {
		v := opts[key]
		switch key {
		case "header":
			fo.Header = isTrue(v)
		case "inferschema", "inferschemas":
			fo.InferSchema = isTrue(v)
		case "schemaevolutionmode":
			// new columns always go to _rescued_data: the schema is fixed
			// when the pipeline loads
		case "sep", "delimiter":
			r := []rune(v)
			if len(r) != 1 {
				return fail(optPos[key], "the CSV delimiter must be one character, found %q", v)
			}
			fo.Delimiter = r[0]
		case "schema":
			s, err := sql.ParseSchema(f.Path, v)
			if err != nil {
				return fail(optPos[key], "the schema %q is not valid: %s", v, errorMessage(err))
			}
			schema = &s
		case "maxfilespertrigger":
			n, err := fmt.Sscan(v, &fo.MaxFilesPerTrigger)
			if err != nil || n != 1 || fo.MaxFilesPerTrigger < 0 {
				return fail(optPos[key], "maxFilesPerTrigger needs a non-negative integer, found %q", v)
			}
		case "maxbytespertrigger":
			n, ok := parseByteSize(v)
			if !ok {
				return fail(optPos[key], "maxBytesPerTrigger needs a size such as 10485760, 10m or 1g, found %q", v)
			}
			fo.MaxBytesPerTrigger = n
		case "maxrowspertrigger":
			n, err := fmt.Sscan(v, &fo.MaxRowsPerTrigger)
			if err != nil || n != 1 || fo.MaxRowsPerTrigger < 0 {
				return fail(optPos[key], "maxRowsPerTrigger needs a non-negative integer, found %q", v)
			}
		case "rescueddatacolumn", "mode":
			// bad records are always rescued into _rescued_data
		default:
			return fail(optPos[key], "%s has no option %s (sluice knows format, header, inferSchema, sep, schema, maxFilesPerTrigger, maxBytesPerTrigger, maxRowsPerTrigger)", fn, key)
		}
	}
	dir, pattern := splitGlob(l.relPath(path))
	fo.Pattern = pattern
	fo.RescueBadRecords = fo.Format != "parquet"
	fo.Schema = schema
	if schema == nil && fo.Format != "text" {
		inferred, err := inferFileSchema(dir, fo)
		if err != nil {
			return sql.Relation{}, &sql.Error{Code: domain.CodeOf(err), File: f.Path, Pos: call.Pos, Message: errorMessage(err)}
		}
		fo.Schema = &inferred
	}
	fo.Metadata = metadata
	sch, err := fileSchema(fo)
	if err != nil {
		return sql.Relation{}, &sql.Error{Code: domain.CodeSourceOptionInvalid, File: f.Path, Pos: call.Pos, Message: errorMessage(err)}
	}
	// one source per read: two reads of the same files are two inputs
	name := fmt.Sprintf("%s %s (%s:%d)", fo.Format, path, f.Path, call.Pos.Line)
	l.sources[name] = sources.Files(dir, fo)
	hidden := 0
	if metadata {
		hidden = 1
	}
	return sql.Relation{Name: name, Schema: sch, Hidden: hidden}, nil
}

// fileSchema is the schema of the batches a file source with fo reads: the
// declared columns, _rescued_data when rescuing, and _metadata.
func fileSchema(fo sources.FileOptions) (domain.Schema, error) {
	var fields []domain.Field
	switch {
	case fo.Schema != nil:
		for _, f := range fo.Schema.Fields {
			if f.Name == sources.RescuedDataColumn {
				continue
			}
			if fo.RescueBadRecords {
				f.Nullable = true
			}
			fields = append(fields, f)
		}
	case fo.Format == "text":
		fields = []domain.Field{{Name: "value", Type: domain.TypeString, Nullable: true}}
	default:
		return domain.Schema{}, fmt.Errorf("no schema for %s files", fo.Format)
	}
	if fo.RescueBadRecords {
		fields = append(fields, domain.Field{Name: sources.RescuedDataColumn, Type: domain.TypeString, Nullable: true})
	}
	if fo.Metadata {
		fields = append(fields, sources.MetadataColumn)
	}
	return domain.NewSchema(fields...), nil
}

// parseByteSize reads a byte count as Spark's byte options take it: a number,
// or one with a unit b, k, m, g or t (powers of 1024, case-insensitive, an
// optional trailing b: 10m, 10mb, 1g).
func parseByteSize(v string) (int64, bool) {
	s := strings.ToLower(strings.TrimSpace(v))
	s = strings.TrimSuffix(s, "b")
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, false
	}
	return n * mult, true
}

// inferFileSchema reads a sample of the files there now (the oldest 100,
// up to 10,000 rows) and returns the columns found, as Auto Loader infers a
// schema when a stream starts. A column takes the type of the first file
// that has a value for it (bigint widening to double), so that the schema
// stays the same from update to update while those files stay: a later
// value of another type goes to _rescued_data rather than changing the
// column.
func inferFileSchema(dir string, fo sources.FileOptions) (domain.Schema, error) {
	fo.Schema, fo.Metadata = nil, false
	schemas, err := sources.SampleSchemas(context.Background(), dir, fo, 100, 10000)
	if err != nil {
		return domain.Schema{}, err
	}
	var fields []domain.Field
	for _, sc := range schemas {
		fields = mergeInferred(fields, sc)
	}
	if len(schemas) == 0 {
		return domain.Schema{}, domain.Errorf(domain.CodeUnableToInferSchema, "no %s files in %s to infer the columns from", fo.Format, dir)
	}
	if len(fields) == 0 {
		return domain.Schema{}, domain.Errorf(domain.CodeUnableToInferSchema, "the %s files in %s have no columns", fo.Format, dir)
	}
	return domain.NewSchema(fields...), nil
}

// mergeInferred adds the columns of one file's schema to those found so
// far: new columns at the end, a NULL-only column typed by the first value,
// bigint widened to double; any other difference keeps the first type.
func mergeInferred(fields []domain.Field, s domain.Schema) []domain.Field {
	for _, f := range s.Fields {
		if f.Name == sources.RescuedDataColumn {
			continue
		}
		f.Nullable = true
		i := domain.NewSchema(fields...).Index(f.Name)
		switch {
		case i < 0:
			fields = append(fields, f)
		case fields[i].Type.Kind == domain.KindNull,
			fields[i].Type.Kind == domain.KindInt64 && f.Type.Kind == domain.KindFloat64:
			fields[i].Type = f.Type
		}
	}
	return fields
}

// splitGlob splits a path with glob characters into the directory before
// the first of them and the pattern after it.
func splitGlob(p string) (dir, pattern string) {
	if !strings.ContainsAny(p, "*?[") {
		return p, ""
	}
	parts := strings.Split(filepath.ToSlash(p), "/")
	for i, part := range parts {
		if strings.ContainsAny(part, "*?[") {
			return filepath.FromSlash(strings.Join(parts[:i], "/")), strings.Join(parts[i:], "/")
		}
	}
	return p, ""
}

func formatFromPath(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".json", ".jsonl", ".ndjson":
		return "json"
	case ".csv":
		return "csv"
	case ".parquet":
		return "parquet"
	case ".txt":
		return "text"
	}
	return ""
}

func isTrue(v string) bool { return strings.EqualFold(v, "true") }

// constText is the text of a constant option: a string, a number or a
// boolean.
func constText(e sql.Expr) (string, bool) {
	lit, ok := e.(*sql.Literal)
	if !ok {
		return "", false
	}
	if lit.Kind == sql.StringLit {
		return lit.Value, true
	}
	return lit.Text, lit.Kind != sql.NullLit
}

func sortedOptionKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
