// Package sql is sluice's language: the SQL of Databricks / Spark declarative
// pipelines, as real users write it. It is pure: it imports only the standard
// library and domain, and knows nothing of pipelines.
//
// This part holds the front half: ${key} substitution, the lexer, the parser
// and the syntax tree. ParseFile parses a .sql file or a notebook export into
// a File of statements; ParseExpr parses one expression. Format and String
// print any node back as canonical SQL, and parsing that text gives the same
// tree.
//
// # What is accepted
//
// Datasets in the current syntax (CREATE [OR REFRESH] [PRIVATE] [TEMPORARY]
// STREAMING TABLE, MATERIALIZED VIEW, CREATE [OR REPLACE] [TEMPORARY] VIEW)
// and in the older LIVE forms; flows (CREATE FLOW ... AS INSERT INTO [ONCE] t
// BY NAME query, with DEPENDS ON); AUTO CDC and APPLY CHANGES with all their
// clauses; SET; USE; and queries standing alone.
//
// # Caveats
//
//   - ${key} is replaced before lexing, everywhere except inside -- and /* */
//     comments; inside a string, \${key} is kept as text. Positions stay
//     those of the file: a token that comes from a substituted value is
//     reported at its ${. An unknown key is UNBOUND_SQL_PARAMETER.
//   - As in Spark, adjacent strings are joined ('a' 'b' is 'ab'), and a
//     doubled quote is not an escape: it ends one string and starts the
//     next, so the quote is lost. Write 'it\'s' or "it's". \% and \_ keep their
//     backslash, for LIKE. Shift operators (<<, >>) are not supported.
//   - Keywords are not reserved, except a few words that cannot start an
//     expression unquoted (SELECT, FROM, WHERE, AND, OR, ... — see
//     reservedExpr) and words that cannot be an alias without AS (see
//     notAlias). Quote such names in backticks.
//   - STREAM followed by a name is a streaming read (FROM STREAM x); a table
//     named stream is read with FROM stream alone, FROM stream AS s, or
//     FROM `stream` s.
//   - Hints (/*+ BROADCAST(t) */) are comments: they are not kept.
//   - Functions called without parentheses (current_date, current_timestamp)
//     parse as column references; resolution treats them as calls.
//   - The parser stops at the first error of a file.
//
// # Expressions
//
// Compile resolves an expression against an input schema and type-checks it
// with Spark 4's ANSI rules; the Compiled result evaluates over a whole
// domain.Batch at a time, one typed loop per operator. Covered so far:
// literals, columns and struct fields, + - * / % and unary minus,
// comparisons (with <=>), AND / OR / NOT, IS [NOT] NULL | TRUE | FALSE |
// UNKNOWN, IS [NOT] DISTINCT FROM, [NOT] IN (list), [NOT] BETWEEN, [NOT]
// LIKE / ILIKE with ESCAPE, CASE, CAST / :: / TRY_CAST between bigint,
// double, string, boolean, date and timestamp, and the functions coalesce,
// nvl, ifnull, nullif, if, upper, lower, length, trim (all forms), ltrim,
// rtrim, concat (and ||), substring / substr, abs, round, floor, ceil.
// Anything else is NOT_IMPLEMENTED at compile time.
//
// Arrays, maps and structs (held as domain.Values): array, map, struct,
// named_struct, map_from_arrays, subscripts (a[0], m['k'], st['f']),
// element_at, size, the array_* and map_* functions, concat of arrays; the
// higher-order functions with lambdas (transform, filter, exists, forall,
// aggregate, zip_with, map_filter, transform_keys, transform_values,
// array_sort with a comparator), whose body runs once per batch over the
// flattened elements; and JSON: get_json_object, col:path, from_json,
// to_json, schema_of_json, json_object_keys, json_array_length. Generators
// (explode, posexplode, inline and their _outer forms, stack, json_tuple)
// make rows: CompileGenerator compiles them, and Compile refuses them with
// UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS.
//
// Differences from Spark, for now:
//   - All integer types are bigint and DECIMAL is double: 1.5 is a double
//     literal, CAST(x AS INT) gives a bigint without INT's range check.
//   - upper follows Java for ß (SS) but not for Unicode's other one-to-many
//     mappings; lower('İ') is 'i', not Java's 'i̇'.
//   - TIMESTAMP is TIMESTAMP_LTZ (UTC microseconds); CompileSession sets
//     the session time zone (spark.sql.session.timeZone, UTC by default)
//     that renders timestamps, extracts their fields and reads strings
//     without an offset. Casts that shared helpers (implicit, unify,
//     asString) make take it only where a compiler method passes them to
//     zoned; elsewhere they are UTC.
//   - Intervals are of two kinds: year-month (INTERVAL YEAR, MONTH, YEAR TO
//     MONTH) and day-time (every unit from DAY to SECOND), printed as YEAR
//     TO MONTH and DAY TO SECOND; a day-only interval literal or date
//     difference still adds to a date as days. make_interval mixing both
//     kinds, sliding windows and casts to the narrower interval types are
//     NOT_IMPLEMENTED. Datetime patterns: no week-based fields (w, W, Y, e,
//     c, F) and no optional sections.
//   - A row-level error stops the whole batch at the first offending row,
//     as Spark stops the query.
//   - sequence takes whole-number steps only (days for dates; no intervals,
//     no timestamps) and builds at most 2^20 elements; the JSON functions
//     take no options; maps refuse duplicate keys (Spark's default policy).
package sql
