// Package syntax is the surface of sluice's SQL: ${key} substitution,
// the lexer, the parser and the syntax tree it builds, the printer (Format
// and String) and the walker (Inspect). It imports only the standard library
// and domain; the package sql compiles, plans and runs what it parses.
//
// ParseFile parses a .sql file or a notebook export into a File of
// statements (ParseFileAll goes on after an error); ParseExpr parses one
// expression and ParseType a type or a column list. Every node has a Pos
// that names the file it was parsed from, with its line and column in the
// original text (before substitution), so errors found later, while
// planning or running, are placed without searching the trees again. Format
// and String print any node back as canonical SQL, and parsing that text
// gives the same tree. Errors are *Error, which unwraps to a *domain.Error
// with the same code.
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
package syntax
