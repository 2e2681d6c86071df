package pipeline

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sources"
	"github.com/sluicehq/sluice/sql"
	"github.com/sluicehq/sluice/sql/syntax"
)

// fileRelation resolves read_files('path', format => 'json', ...) or the
// older cloud_files('path', 'json', map('header', 'true')): a file source,
// with the schema given or inferred from the files there now.
func (l *sqlLoader) fileRelation(f *sqlFile, call *syntax.FuncCall, fn string, metadata bool) (sql.Relation, error) {
	fail := func(p syntax.Pos, format string, args ...any) (sql.Relation, error) {
		return sql.Relation{}, &syntax.Error{Code: domain.CodeSourceOptionInvalid, File: f.Path, Pos: p, Message: fmt.Sprintf(format, args...)}
	}
	var path string
	opts := map[string]string{}
	optPos := map[string]syntax.Pos{}
	positional := 0
	for _, a := range call.Args {
		switch a := a.(type) {
		case *syntax.NamedArg:
			v, ok := constText(a.Value)
			if !ok {
				return fail(a.Value.Position(), "the option %s of %s needs a constant value", a.Name.Name, fn)
			}
			key := strings.ToLower(a.Name.Name)
			opts[key], optPos[key] = v, a.Pos
		default:
			if fc, ok := a.(*syntax.FuncCall); ok && strings.EqualFold(fc.Name.Last().Name, "map") && fn == "cloud_files" {
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
	// read_files infers column types; Auto Loader (cloud_files) reads
	// JSON and CSV columns as strings unless inferColumnTypes is true.
	inferTypes := fn == "read_files"
	var schema, hints *domain.Schema
	var rescueAs, evolution string
	var notes []string
	for _, key := range sortedOptionKeys(opts) {
		v := opts[key]
		bad := func(want string) (sql.Relation, error) {
			return fail(optPos[key], "the option %s needs %s, found %q", key, want, v)
		}
		switch key {
		case "header":
			fo.Header = isTrue(v)
		case "inferschema", "infercolumntypes":
			inferTypes = isTrue(v)
		case "schemahints":
			s, err := sql.ParseSchema(f.Path, v)
			if err != nil {
				return fail(optPos[key], "the schema hints %q are not valid: %s", v, errorMessage(err))
			}
			hints = &s
		case "schemaevolutionmode":
			switch strings.ToLower(v) {
			case "addnewcolumns", "rescue", "none", "failonnewcolumns":
				evolution = strings.ToLower(v)
			default:
				return bad("addNewColumns, rescue, failOnNewColumns or none")
			}
		case "rescueddatacolumn":
			if v == "" {
				return bad("a column name")
			}
			rescueAs = v
		case "mode":
			switch strings.ToUpper(v) {
			case "PERMISSIVE", "DROPMALFORMED", "FAILFAST":
				fo.Mode = strings.ToUpper(v)
			default:
				return bad("PERMISSIVE, DROPMALFORMED or FAILFAST")
			}
		case "multiline":
			fo.MultiLine = isTrue(v)
		case "encoding", "charset":
			fo.Encoding = v
		case "pathglobfilter":
			fo.NameFilter = v
		case "recursivefilelookup":
			fo.TopLevelOnly = !isTrue(v)
		case "modifiedafter", "modifiedbefore":
			t, ok := parseOptionTime(v)
			if !ok {
				return bad("a timestamp such as 2024-06-01T00:00:00Z or 2024-06-01 00:00:00")
			}
			if key == "modifiedafter" {
				fo.ModifiedAfter = t
			} else {
				fo.ModifiedBefore = t
			}
		case "sep", "delimiter":
			r := []rune(v)
			if len(r) != 1 {
				return fail(optPos[key], "the CSV delimiter must be one character, found %q", v)
			}
			fo.Delimiter = r[0]
		case "quote", "escape":
			r := []rune(v)
			switch {
			case v == "":
				r = []rune{-1} // no quoting, no escaping
			case len(r) != 1:
				return bad("one character, or '' for none")
			}
			if key == "quote" {
				fo.Quote = r[0]
			} else {
				fo.Escape = r[0]
			}
		case "nullvalue":
			fo.NullValue = v
		case "dateformat", "timestampformat":
			parser := sql.DatetimeParser
			if key == "dateformat" {
				parser = sql.DateParser
			}
			parse, err := parser(v)
			if err != nil {
				return fail(optPos[key], "the %s %q is not a valid datetime pattern: %s", key, v, errorMessage(err))
			}
			if key == "dateformat" {
				fo.ParseDate = parse
			} else {
				fo.ParseTimestamp = parse
			}
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
		default:
			if note, ok := optionWithoutEffect(key); ok {
				notes = append(notes, fmt.Sprintf("%s(%s): the option %s %s", fn, path, key, note))
				continue
			}
			return fail(optPos[key], "%s has no option %s%s (the README lists the options)", fn, key, didYouMean(key, knownFileOptions))
		}
	}
	dir, pattern := splitGlob(l.relPath(path))
	fo.Pattern = pattern
	if fo.Format != "parquet" {
		// As Databricks: with the schema inferred, records that do not fit
		// are rescued into _rescued_data; with a schema given, only when
		// rescuedDataColumn asks for it.
		// DROPMALFORMED and FAILFAST rescue nothing: no such column then.
		fo.RescueBadRecords = (schema == nil || rescueAs != "") && (fo.Mode == "" || fo.Mode == "PERMISSIVE")
		fo.RescuedDataColumn = rescueAs
	}
	if fo.Format == "csv" {
		fo.InferSchema = inferTypes
	}
	fo.FailOnNewColumns = evolution == "failonnewcolumns"
	if fo.Mode == "" {
		fo.Mode = "PERMISSIVE" // Spark's default: a bad record never fails the read
	}
	if schema == nil && fo.Format != "text" {
		inferred, err := inferFileSchema(dir, fo)
		if err != nil {
			return sql.Relation{}, &syntax.Error{Code: domain.CodeOf(err), File: f.Path, Pos: call.Pos, Message: errorMessage(err)}
		}
		if !inferTypes && fo.Format == "json" {
			inferred = asStrings(inferred)
		}
		schema = &inferred
	}
	if hints != nil && schema != nil {
		s := applyHints(*schema, *hints)
		schema = &s
	}
	fo.Schema = schema
	fo.Metadata = metadata
	sch, err := fileSchema(fo)
	if err != nil {
		return sql.Relation{}, &syntax.Error{Code: domain.CodeSourceOptionInvalid, File: f.Path, Pos: call.Pos, Message: errorMessage(err)}
	}
	// one source per read: two reads of the same files are two inputs
	name := fmt.Sprintf("%s %s (%s:%d)", fo.Format, path, f.Path, call.Pos.Line)
	l.sources[name] = sources.Files(dir, fo)
	l.sourceNotes[name] = notes
	hidden := 0
	if metadata {
		hidden = 1
	}
	return sql.Relation{Name: name, Schema: sch, Hidden: hidden}, nil
}

// knownFileOptions are the options read_files and cloud_files take, lower
// case, for suggestions.
var knownFileOptions = []string{"format", "header", "inferschema", "infercolumntypes", "schemahints", "schemaevolutionmode",
	"rescueddatacolumn", "mode", "multiline", "encoding", "charset", "pathglobfilter", "recursivefilelookup", "modifiedafter",
	"modifiedbefore", "sep", "delimiter", "quote", "escape", "nullvalue", "dateformat", "timestampformat", "schema",
	"maxfilespertrigger", "maxbytespertrigger", "maxrowspertrigger"}

// optionWithoutEffect says why an Auto Loader option that means nothing
// here is accepted: file notification and cloud settings (sluice lists the
// directory), and settings whose behaviour is sluice's own. ok is false for
// an option sluice does not know.
func optionWithoutEffect(key string) (note string, ok bool) {
	switch key {
	case "usenotifications", "queueurl", "region", "subscriptionid", "tenantid", "clientid", "clientsecret",
		"connectionstring", "resourcegroup", "fetchparallelism", "pathrewrites", "usemanagedfileevents",
		"useincrementallisting", "backfillinterval", "usestrictglobber":
		return "has no effect: sluice lists the directory at each micro-batch", true
	case "schemalocation":
		return "has no effect: the schema is inferred when the pipeline loads and recorded with each micro-batch", true
	case "validateoptions":
		return "has no effect: options are always checked when the pipeline loads", true
	case "includeexistingfiles":
		return "has no effect: files already there are read too", true
	case "allowoverwrites":
		return "has no effect: a file that grows is read on from where it was left, and another file put at its path is read from its start", true
	case "schemainference.samplesize.numbytes", "schemainference.samplesize.numfiles":
		return "has no effect: the schema is inferred from the oldest 100 files, at most 10,000 rows", true
	case "maxfileage", "cleansource", "cleansource.retentionduration", "cleansource.moveddestination":
		return "has no effect: sluice never removes or moves source files, and remembers every file it read", true
	}
	return "", strings.HasPrefix(key, "resourcetag.")
}

// parseOptionTime reads modifiedAfter and modifiedBefore: an ISO 8601
// timestamp, UTC unless it says otherwise.
func parseOptionTime(v string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, strings.TrimSpace(v)); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// asStrings is an inferred schema read as Auto Loader reads JSON without
// inferColumnTypes: every column a string (numbers as written).
func asStrings(s domain.Schema) domain.Schema {
	fields := make([]domain.Field, len(s.Fields))
	for i, f := range s.Fields {
		f.Type = domain.TypeString
		fields[i] = f
	}
	return domain.NewSchema(fields...)
}

// applyHints gives the columns named in schemaHints their hinted types, and
// adds the hinted columns the inferred schema lacks, at the end.
func applyHints(s, hints domain.Schema) domain.Schema {
	fields := append([]domain.Field(nil), s.Fields...)
	for _, h := range hints.Fields {
		h.Nullable = true
		if i := domain.NewSchema(fields...).Index(h.Name); i >= 0 {
			fields[i].Type = h.Type
		} else {
			fields = append(fields, h)
		}
	}
	return domain.NewSchema(fields...)
}

// fileSchema is the schema of the batches a file source with fo reads: the
// declared columns, _rescued_data when rescuing, and _metadata.
func fileSchema(fo sources.FileOptions) (domain.Schema, error) {
	var fields []domain.Field
	switch {
	case fo.Schema != nil:
		for _, f := range fo.Schema.Fields {
			if f.Name == sources.RescuedDataColumn || (fo.RescuedDataColumn != "" && f.Name == fo.RescuedDataColumn) {
				continue
			}
			if fo.RescueBadRecords || fo.Mode == "PERMISSIVE" {
				f.Nullable = true // a bad record is a row of NULLs
			}
			fields = append(fields, f)
		}
	case fo.Format == "text":
		fields = []domain.Field{{Name: "value", Type: domain.TypeString, Nullable: true}}
	default:
		return domain.Schema{}, fmt.Errorf("no schema for %s files", fo.Format)
	}
	if fo.RescueBadRecords {
		name := fo.RescuedDataColumn
		if name == "" {
			name = sources.RescuedDataColumn
		}
		fields = append(fields, domain.Field{Name: name, Type: domain.TypeString, Nullable: true})
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
func constText(e syntax.Expr) (string, bool) {
	lit, ok := e.(*syntax.Literal)
	if !ok {
		return "", false
	}
	if lit.Kind == syntax.StringLit {
		return lit.Value, true
	}
	return lit.Text, lit.Kind != syntax.NullLit
}

func sortedOptionKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
