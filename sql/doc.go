// Package sql is sluice's language: the SQL of Databricks / Spark declarative
// pipelines, as real users write it. It is pure: it imports only the standard
// library and domain, and knows nothing of pipelines (the pipeline package
// turns a file's statements into datasets and flows).
//
// It runs in four stages:
//
//   - Lexer and parser: ${key} substitution, tokens, the syntax tree.
//     ParseFile parses a .sql file or a notebook export into a File of
//     statements; ParseExpr parses one expression. Format and String print
//     any node back as canonical SQL, and parsing that text gives the same
//     tree.
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
// # What is accepted
//
// Datasets in the current syntax (CREATE [OR REFRESH] [PRIVATE] [TEMPORARY]
// STREAMING TABLE, MATERIALIZED VIEW, CREATE [OR REPLACE] [TEMPORARY] VIEW)
// and in the older LIVE forms; flows (CREATE FLOW ... AS INSERT INTO [ONCE] t
// BY NAME query, with DEPENDS ON); AUTO CDC and APPLY CHANGES with all their
// clauses; SET; USE; and queries standing alone.
//
// Queries: SELECT with DISTINCT, * EXCEPT, WHERE, GROUP BY (ordinals,
// aliases, ALL, GROUPING SETS, ROLLUP, CUBE) and HAVING, window functions with named windows and
// QUALIFY, ORDER BY, LIMIT and OFFSET; joins (INNER, LEFT, RIGHT, FULL,
// CROSS, LEFT SEMI, LEFT ANTI, NATURAL, USING, equi- and other conditions);
// UNION, INTERSECT and EXCEPT / MINUS with or without ALL; WITH; scalar,
// IN and EXISTS subqueries (not correlated); LATERAL VIEW [OUTER] and a
// generator in the select list; VALUES; range(...); and table functions the
// Catalog resolves (read_files in pipelines).
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
// # Caveats of the syntax
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
// # Differences from Spark
//
//   - Types: all integer types are bigint and DECIMAL is double (1.5 is a
//     double literal, CAST(x AS INT) checks INT's range and gives a
//     bigint, mod(2, 1.8) is 0.19999999999999996, sum and avg of decimals
//     are doubles). TIMESTAMP and TIMESTAMP_NTZ are TIMESTAMP_LTZ (UTC
//     microseconds); the session time zone (spark.sql.session.timeZone, UTC
//     by default) renders timestamps, extracts their fields and reads
//     strings without an offset. Casts that shared helpers (implicit, unify,
//     asString) make take it only where a compiler method passes them to
//     zoned; elsewhere they are UTC.
//   - Intervals are year-month or day-time (printed as YEAR TO MONTH and DAY
//     TO SECOND); a day-only interval literal or date difference still adds
//     to a date as days. make_interval mixing both kinds, casts to the
//     narrower interval types, sliding windows (window with a slide other
//     than its duration) and sequence of timestamps or with interval steps
//     are NOT_IMPLEMENTED; sequence builds at most 2^20 elements.
//   - Datetime patterns: no week-based fields (w, W, Y, e, c, F), no zone
//     names O, no optional sections (INVALID_DATETIME_PATTERN).
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
