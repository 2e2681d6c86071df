// Package sql is sluice's language: the SQL of Databricks / Spark declarative
// pipelines, as real users write it. It is pure: it imports only the standard
// library and domain, and knows nothing of pipelines (the pipeline package
// turns a file's statements into datasets and flows).
//
// It runs in four stages:
//
//   - Lexer and parser, in the package sql/syntax: ${key} substitution,
//     tokens, the syntax tree, its printer and its walker. This package
//     imports syntax and works on its trees; the positions of their nodes
//     name their file, so an error found while compiling, planning or
//     running a query says where it comes from.
//   - Compiler: Compile (CompileSession, under a session time zone)
//     resolves an expression against an input schema and type-checks it
//     with Spark 4's ANSI rules.
//   - Evaluator: a Compiled expression evaluates over a whole domain.Batch
//     at a time, one typed loop per operator; lambdas and aggregates run a
//     column at a time too.
//   - Planner: PlanQuery resolves a query against a Catalog into a Plan of
//     operators (scans, filters, projections, joins, aggregates, windows,
//     generators, set operations, sorts, limits) that Run evaluates over
//     batches; RowWiseIn says whether a plan can run on each micro-batch of
//     a stream.
//
// # Functions
//
// Scalars are registered by the file of their family (builtins.go):
// conditional (eval_funcs.go, fn_math.go), math and try_ arithmetic
// (fn_math.go), strings (eval_funcs.go, fn_string.go, fn_string_more.go),
// format_string (fn_format.go), regular expressions (fn_regex.go on
// regex.go), hashes and encodings (fn_hash.go), dates, timestamps and
// intervals (fn_date.go, fn_date_more.go), arrays, maps and structs
// (fn_collection.go), higher-order functions with lambdas (lambda.go) and
// JSON (fn_json.go). Aggregates are in agg.go and agg_*.go (all take
// FILTER, and DISTINCT except with WITHIN GROUP), generators in generator.go (Compile refuses them
// with UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS), ranking and offset
// window functions in plan_window.go.
//
// # Differences from Spark
//
//   - Types: TINYINT, SMALLINT, INT and FLOAT are bigints and doubles held
//     to their type's range (the type lives in the schema and in the
//     compiled expression, not in each value); DECIMAL(p, s) is exact
//     (decimal.go); TIMESTAMP is an instant in UTC microseconds, shown in
//     the session time zone (spark.sql.session.timeZone, UTC by default),
//     and TIMESTAMP_NTZ a wall-clock time stored as its UTC microseconds.
//     Casts that shared helpers (implicit, unify, asString) make take the
//     session's zone only where a compiler method passes them to zoned;
//     elsewhere they are UTC. VARIANT is a string of canonical JSON
//     (fn_variant.go), not Spark's binary encoding.
//   - Intervals are year-month or day-time (printed as YEAR TO MONTH and DAY
//     TO SECOND); a day-only interval literal or date difference still adds
//     to a date as days. make_interval mixing both kinds, casts to the
//     narrower interval types, sliding windows (window with a slide other
//     than its duration) and sequence of timestamps or with interval steps
//     are NOT_IMPLEMENTED; sequence builds at most 2^20 elements.
//   - Datetime patterns: no week-based fields (w, W, Y, e, c, F), no zone
//     names O (INVALID_DATETIME_PATTERN); optional sections [...] are read
//     when they match.
//   - Regular expressions are Java's syntax run by Go's RE2 (regex.go):
//     lookahead, lookbehind, backreferences, possessive quantifiers, atomic
//     groups, class unions and intersections, the escapes \G \Z \R \X \h \H
//     \v \V \e \c \N and inline flags other than i, m and s are
//     UNSUPPORTED_REGEX rather than a different match. Left: with the i flag
//     RE2 folds all of Unicode (Java only ASCII), \s does not match \x0B,
//     with m only \n breaks lines, \b is ASCII, and regexp_replace counts
//     positions in characters, not UTF-16 units.
//   - format_string supports %s %S %d %x %X %o %f %c %b %B %n %% with the
//     flags - + space 0 , and argument indexes; anything else (%e, %g, %t,
//     %h, #, () is UNSUPPORTED_FORMAT_STRING.
//   - approx_count_distinct and percentile_approx are exact (within any
//     error bound, but their memory grows with the data). Where Spark's
//     answer depends on the order rows arrive in (collect_list, first,
//     last, any_value, listagg without WITHIN GROUP, max_by of equal keys,
//     mode of equally frequent values), sluice gives one of Spark's
//     possible answers.
//   - rand(seed) restarts its sequence for every batch and differs from
//     Spark's values; without a seed every evaluation draws new values.
//   - lpad, rpad and repeat stop at a smaller length than Spark's 2 GiB
//     (INVALID_PARAMETER_VALUE.LENGTH).
//   - upper follows Java for ß (SS) but not for Unicode's other one-to-many
//     mappings; lower('İ') is 'i', not Java's 'i̇'.
//   - The JSON functions (from_json, to_json, schema_of_json) take no
//     options; maps refuse duplicate keys (Spark's default policy).
//   - Queries: no correlated subqueries, LATERAL subqueries, PIVOT,
//     TABLESAMPLE, SORT BY or CLUSTER BY; a RANGE frame with an offset takes
//     one ORDER BY key (a number, or a date or timestamp offset by a
//     day-time interval).
//   - A row-level error stops the whole batch at the first offending row,
//     as Spark stops the query.
package sql
