package domain

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Code names a class of error. Codes are stable: users search for them, scripts
// match on them. Where Spark declarative pipelines has a code for the same
// situation, sluice uses Spark's spelling.
type Code string

// The codes sluice reports. Each has an entry in codeInfo with the sentence
// shown to users and a hint saying what to do.
const (
	// Pipeline definition (validation) errors.
	CodeEmptyPipeline              Code = "PIPELINE_EMPTY"
	CodeDuplicateIdentifiers       Code = "PIPELINE_DUPLICATE_IDENTIFIERS"
	CodeFlowNameIsTableName        Code = "FLOW_NAME_CONFLICTS_WITH_DATASET"
	CodeDatasetWithoutFlow         Code = "PIPELINE_DATASET_WITHOUT_FLOW"
	CodeUnknownDataset             Code = "TABLE_OR_VIEW_NOT_FOUND"
	CodeUnknownDependsOn           Code = "DEPENDS_ON_UNKNOWN_FLOW"
	CodeCircularDependency         Code = "CIRCULAR_DEPENDENCY"
	CodePredecessorWritesView      Code = "DEPENDS_ON_PREDECESSOR_WRITES_VIEW"
	CodePredecessorMustBeOnce      Code = "DEPENDS_ON_PREDECESSOR_MUST_BE_ONCE"
	CodeForeachBatchOnce           Code = "INVALID_FLOW_QUERY_TYPE.FOREACH_BATCH_ONCE"
	CodeOnceOverStream             Code = "INVALID_FLOW_QUERY_TYPE.ONCE_STREAMING_READ"
	CodeStreamingTableBatchRead    Code = "INVALID_FLOW_QUERY_TYPE.BATCH_READ_FOR_STREAMING_TABLE"
	CodeInvalidFlowTarget          Code = "INVALID_FLOW_TARGET"
	CodeInvalidName                Code = "INVALID_IDENTIFIER"
	CodeInvalidDefinition          Code = "INVALID_DEFINITION"
	CodeImportCheckpointInvalid    Code = "IMPORT_CHECKPOINT_INVALID"
	CodeUnknownFlowSelection       Code = "UNKNOWN_FLOW_SELECTION"
	CodeUnknownTableSelection      Code = "UNKNOWN_TABLE_SELECTION"
	CodeConflictingUpdateOptions   Code = "CONFLICTING_UPDATE_OPTIONS"
	CodeTableNotResettable         Code = "TABLE_NOT_RESETTABLE"
	CodeNotImplemented             Code = "NOT_IMPLEMENTED"
	CodeSchemaDrift                Code = "SCHEMA_DRIFT"
	CodeFlowFailed                 Code = "FLOW_FAILED"
	CodeUpstreamFailed             Code = "UPSTREAM_FAILED"
	CodeUserFunctionFailed         Code = "USER_FUNCTION_FAILED"
	CodeSourceFailed               Code = "SOURCE_FAILED"
	CodeEventCodec                 Code = "EVENT_CODEC_INVALID"
	CodeBatchCodec                 Code = "BATCH_CODEC_INVALID"
	CodeTxnTooLarge                Code = "COMMIT_TOO_LARGE"
	CodeStoreClosed                Code = "STORE_CLOSED"
	CodeStoreIO                    Code = "STORE_IO"
	CodeStoreFormat                Code = "STORE_FORMAT_UNSUPPORTED"
	CodeStoreCorrupt               Code = "STORE_CORRUPT"
	CodeStoreNotClosed             Code = "STORE_NOT_CLOSED"
	CodeStoreLocked                Code = "STORE_LOCKED"
	CodeProjectionMismatch         Code = "PROJECTION_MISMATCH"
	CodeInvalidUpdateState         Code = "INVALID_UPDATE_STATE"
	CodeCheckpointStoreUnavailable Code = "IMPORT_CHECKPOINT_SOURCE_UNAVAILABLE"
	CodeMalformedRecord            Code = "MALFORMED_RECORD_IN_PARSING"
	CodeUnknownField               Code = "UNKNOWN_FIELD_EXCEPTION.NEW_FIELDS_IN_RECORD_WITH_FILE_PATH"
	CodeRowsVacuumed               Code = "ROWS_VACUUMED"
	CodePipelineIncomplete         Code = "PIPELINE_INCOMPLETE"
	CodeFileNotExist               Code = "FAILED_READ_FILE.FILE_NOT_EXIST"
	CodeFileUnreadable             Code = "FAILED_READ_FILE"
	CodePathNotFound               Code = "PATH_NOT_FOUND"
	CodeSourceOptionInvalid        Code = "INVALID_SOURCE_OPTION"
	CodeEventNotFound              Code = "EVENT_NOT_FOUND"
	CodeUpstreamReset              Code = "STREAMING_SOURCE_WAS_RESET"
	CodeStreamOfMaterializedView   Code = "INVALID_FLOW_QUERY_TYPE.STREAMING_READ_OF_MATERIALIZED_VIEW"
	CodeUpdateRunning              Code = "UPDATE_ALREADY_RUNNING"
	CodeProcessEnded               Code = "UPDATE_PROCESS_ENDED"
	CodeParseSyntax                Code = "PARSE_SYNTAX_ERROR"
	CodeUnboundParameter           Code = "UNBOUND_SQL_PARAMETER"
	CodeUnableToInferSchema        Code = "UNABLE_TO_INFER_SCHEMA"
	CodeExpectationViolation       Code = "EXPECTATION_VIOLATION"

	// Project (pipeline.yaml) errors.
	CodePipelineConfigInvalid Code = "PIPELINE_CONFIG_INVALID"
	CodePipelineNotFound      Code = "PIPELINE_NOT_FOUND"
	CodeLibraryNotFound       Code = "LIBRARY_NOT_FOUND"

	// Expression resolution and evaluation errors (Spark's spelling).
	CodeUnresolvedColumn         Code = "UNRESOLVED_COLUMN"
	CodeUnresolvedRoutine        Code = "UNRESOLVED_ROUTINE"
	CodeDatatypeMismatch         Code = "DATATYPE_MISMATCH"
	CodeWrongNumArgs             Code = "WRONG_NUM_ARGS"
	CodeArithmeticOverflow       Code = "ARITHMETIC_OVERFLOW"
	CodeDivideByZero             Code = "DIVIDE_BY_ZERO"
	CodeUserRaisedException      Code = "USER_RAISED_EXCEPTION"
	CodeCastInvalidInput         Code = "CAST_INVALID_INPUT"
	CodeCastOverflow             Code = "CAST_OVERFLOW"
	CodeNumericOutOfRange        Code = "NUMERIC_VALUE_OUT_OF_RANGE"
	CodeInvalidVariantCast       Code = "INVALID_VARIANT_CAST"
	CodeConversionInvalidInput   Code = "CONVERSION_INVALID_INPUT"
	CodeInvalidFormat            Code = "INVALID_FORMAT"
	CodeFormatMismatchInput      Code = "INVALID_FORMAT.MISMATCH_INPUT"
	CodeAESKeyLength             Code = "INVALID_PARAMETER_VALUE.AES_KEY_LENGTH"
	CodeAESCryptoError           Code = "INVALID_PARAMETER_VALUE.AES_CRYPTO_ERROR"
	CodeAESUnsupportedMode       Code = "UNSUPPORTED_FEATURE.AES_MODE"
	CodeInvalidURL               Code = "INVALID_URL"
	CodeVariantDuplicateKey      Code = "VARIANT_DUPLICATE_KEY"
	CodeInvalidVariantPath       Code = "INVALID_VARIANT_GET_PATH"
	CodeInvalidNumericLiteral    Code = "INVALID_NUMERIC_LITERAL_RANGE"
	CodeDecimalPrecisionExceeded Code = "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"
	CodeInvalidLikePattern       Code = "INVALID_LIKE_PATTERN"

	// Query planning errors (Spark's spelling).
	CodeAmbiguousReference   Code = "AMBIGUOUS_REFERENCE"
	CodeMissingAggregation   Code = "MISSING_AGGREGATION"
	CodeNumColumnsMismatch   Code = "NUM_COLUMNS_MISMATCH"
	CodeIncompatibleSetTypes Code = "INCOMPATIBLE_COLUMN_TYPE"
	CodeOrdinalOutOfRange    Code = "ORDER_BY_POS_OUT_OF_RANGE"
	CodeGroupOrdinalRange    Code = "GROUP_BY_POS_OUT_OF_RANGE"
	CodeInvalidLimit         Code = "INVALID_LIMIT_LIKE_EXPRESSION"
	CodeScalarSubqueryRows   Code = "SCALAR_SUBQUERY_TOO_MANY_ROWS"
	CodeInvalidSubquery      Code = "INVALID_SUBQUERY_EXPRESSION"
	CodeUnsupportedQuery     Code = "UNSUPPORTED_QUERY_FEATURE"
	// CodeUnsupportedDataType is a column whose type an output format cannot
	// hold (an interval in Parquet).
	CodeUnsupportedDataType Code = "UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE"
	// CodeInvalidOptions is a function's options map that is not one.
	CodeInvalidOptions Code = "INVALID_OPTIONS"
	// CodeSecretNotSet is ${env:NAME} in an option with NAME not set.
	CodeSecretNotSet Code = "SECRET_NOT_SET"
	// CodeSinkOption is a sink's option that is missing or wrong.
	CodeSinkOption Code = "INVALID_SINK_OPTION"
	// CodeSinkWriteFailed is a sink that could not write a batch.
	CodeSinkWriteFailed Code = "SINK_WRITE_FAILED"
	// CodeSourceUnavailable is a source's system that does not answer.
	CodeSourceUnavailable Code = "SOURCE_UNAVAILABLE"
	// CodeSourceDataLoss is a range a source no longer has (Spark's
	// failOnDataLoss).
	CodeSourceDataLoss Code = "KAFKA_DATA_LOSS"
	// CodeCDCUnchangedToast is an update whose large value Postgres did
	// not send, the table's replica identity not FULL.
	CodeCDCUnchangedToast Code = "CDC_UNCHANGED_TOAST_VALUE"
	// CodeReplicationSlotMissing is a PostgreSQL replication slot dropped
	// under a flow that reads from it.
	CodeReplicationSlotMissing Code = "REPLICATION_SLOT_NOT_FOUND"
	// CodeHookDeliveryFailed is an event a hook was not told of after its
	// last retry.
	CodeHookDeliveryFailed Code = "HOOK_DELIVERY_FAILED"
	// CodeSpoolCorrupt is a message source's spool file that does not read
	// back as written.
	CodeSpoolCorrupt Code = "SOURCE_SPOOL_CORRUPT"
	// CodeCheckpointInvalid is a source offset of a checkpoint that does
	// not read.
	CodeCheckpointInvalid Code = "INVALID_CHECKPOINT_OFFSET"

	// String, regular expression and formatting functions.
	CodeInvalidPattern     Code = "INVALID_PARAMETER_VALUE.PATTERN"
	CodeRegexGroupIndex    Code = "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX"
	CodeInvalidLength      Code = "INVALID_PARAMETER_VALUE.LENGTH"
	CodeUnsupportedRegex   Code = "UNSUPPORTED_REGEX"
	CodeInvalidIndexOfZero Code = "INVALID_INDEX_OF_ZERO"
	CodeUnsupportedFormat  Code = "UNSUPPORTED_FORMAT_STRING"
	// Aggregate and query-shape errors (Spark's spelling).
	CodeAggregateNotAllowed       Code = "UNSUPPORTED_EXPR_FOR_OPERATOR"
	CodeNestedAggregate           Code = "NESTED_AGGREGATE_FUNCTION"
	CodeInvalidWithinGroup        Code = "INVALID_WITHIN_GROUP_EXPRESSION"
	CodeUnsupportedCallSyntax     Code = "INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX"
	CodeInvalidWhereCondition     Code = "INVALID_WHERE_CONDITION"
	CodeGroupByAggregate          Code = "GROUP_BY_AGGREGATE"
	CodeWindowInStreaming         Code = "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING"
	CodeWindowFunctionWithoutOver Code = "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE"
	CodeNegativeFrequency         Code = "NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION"
	// Dates, times and intervals.
	CodeCannotParseTimestamp      Code = "CANNOT_PARSE_TIMESTAMP"
	CodeDatetimeOverflow          Code = "DATETIME_OVERFLOW"
	CodeInvalidFractionOfSecond   Code = "INVALID_FRACTION_OF_SECOND"
	CodeDatetimeFieldOutOfRange   Code = "DATETIME_FIELD_OUT_OF_BOUNDS"
	CodeInvalidDatetimePattern    Code = "INVALID_DATETIME_PATTERN"
	CodeInvalidIntervalFormat     Code = "INVALID_INTERVAL_FORMAT"
	CodeInvalidTimeZone           Code = "INVALID_CONF_VALUE.TIME_ZONE"
	CodeIntervalDividedByZero     Code = "INTERVAL_DIVIDED_BY_ZERO"
	CodeInvalidExtractField       Code = "INVALID_EXTRACT_FIELD"
	CodeIllegalDayOfWeek          Code = "ILLEGAL_DAY_OF_WEEK"
	CodeInvalidParameterValueUnit Code = "INVALID_PARAMETER_VALUE.DATETIME_UNIT"
)

type codeText struct {
	message string // what went wrong, generally
	hint    string // what to do about it
}

var codeInfo = map[Code]codeText{
	CodeInvalidFractionOfSecond:  {"seconds of 60 have a fraction", "give seconds below 60, or exactly 60 for the next minute"},
	CodeEmptyPipeline:            {"the pipeline defines no datasets and no flows", "declare at least one streaming table, materialized view or sink with a flow that fills it"},
	CodeDuplicateIdentifiers:     {"a name is declared more than once", "give every dataset and every flow its own name"},
	CodeFlowNameIsTableName:      {"a flow has the name of a dataset it does not write", "rename the flow; only a dataset's default flow may share its name"},
	CodeDatasetWithoutFlow:       {"a dataset has no flow that writes it", "add a flow targeting the dataset, or give it a query when declaring it"},
	CodeUnknownDataset:           {"a flow names a dataset the pipeline does not declare", "declare the dataset, or correct the name"},
	CodeUnknownDependsOn:         {"depends_on names a flow the pipeline does not declare", "use the name of a flow of this pipeline"},
	CodeCircularDependency:       {"flows depend on each other in a cycle", "break the cycle: remove a depends_on or a read that closes it"},
	CodePredecessorWritesView:    {"a depends_on predecessor writes to a view", "a view never finishes; depend on a flow that writes a table or a sink"},
	CodePredecessorMustBeOnce:    {"in a continuous pipeline a depends_on predecessor must be a once flow", "declare the predecessor with once, or run the pipeline triggered"},
	CodeForeachBatchOnce:         {"a flow into a foreachBatch sink cannot be a once flow", "remove once from the flow; foreachBatch flows are always streaming"},
	CodeOnceOverStream:           {"a once flow reads a dataset as a stream", "read the source as a batch in a once flow"},
	CodeStreamingTableBatchRead:  {"a streaming table is fed by a batch read", "read the source as a stream, or declare the flow once"},
	CodeInvalidFlowTarget:        {"a flow writes to a dataset that cannot be a flow target", "write to a streaming table or a sink"},
	CodeInvalidName:              {"a name is not a valid identifier", "use a non-empty name without control characters"},
	CodeInvalidDefinition:        {"a definition is incomplete", "fill in the missing part of the definition"},
	CodeImportCheckpointInvalid:  {"import_checkpoint is incomplete", "give the storage directory and the flow name of the other pipeline"},
	CodeUnknownFlowSelection:     {"the update names a flow the pipeline does not declare", "choose among the flows listed"},
	CodeUnknownTableSelection:    {"the update names a table the pipeline does not declare", "choose among the tables listed"},
	CodeConflictingUpdateOptions: {"the update options contradict each other", "choose one kind of refresh per update"},
	CodeTableNotResettable:       {"a full refresh was asked of a table that forbids it", "leave the table out of the full refresh, or set pipelines.reset.allowed to true"},
	CodeNotImplemented:           {"this feature is not available yet", "see the README for what is supported"},
	CodeSchemaDrift:              {"a batch does not fit the table's schema", "make the change compatible, or run a full refresh of the table"},
	CodeFlowFailed:               {"a flow failed", "see the flow's error event for the cause"},
	CodeUpstreamFailed:           {"a flow did not run because a predecessor failed", "fix the predecessor; the flow runs in the next update"},
	CodeUserFunctionFailed:       {"a user function returned an error", "see the cause; the batch was not committed and will be delivered again"},
	CodeSourceFailed:             {"a source could not be read", "see the cause; nothing of the batch was committed"},
	CodeEventCodec:               {"an event could not be decoded", "the store may be damaged or written by a newer sluice; check the version"},
	CodeBatchCodec:               {"a batch payload could not be decoded", "the store may be damaged or written by a newer sluice; check the version"},
	CodeTxnTooLarge:              {"a commit is larger than one store transaction allows", "lower the flow's maximum rows per micro-batch"},
	CodeStoreClosed:              {"the event store is closed", "open the store again"},
	CodeStoreIO:                  {"the event store could not read or write its files", "check the disk (space, permissions) and run again; nothing uncommitted was kept"},
	CodeStoreFormat:              {"the storage was written in a format this sluice does not read", "use the sluice version that wrote it"},
	CodeStoreCorrupt: {"the storage is damaged: a file is missing, cut short or altered, so its data cannot be trusted",
		"nothing was read from the damaged part and nothing was written; restore the storage directory from a backup (or run `sluice doctor` to see every damaged file), or start over with a full refresh into a new storage directory"},
	CodeStoreNotClosed: {"the storage was left open by a process that ended without closing it, so it cannot be read without being written",
		"run the pipeline once (sluice run), which recovers the storage, then read it; `sluice doctor` checks it without writing"},
	CodeStoreLocked: {"the storage is in use by another process: one process writes a storage at a time, and readers share it only with other readers",
		"wait for that process to finish, or stop it; then run the command again"},
	CodeProjectionMismatch: {"a projection differs from the one rebuilt from the log", "rebuild the projections from the log; report the difference"},
	CodeInvalidUpdateState: {"the stored state contradicts the log", "rebuild the projections from the log"},
	CodePipelineIncomplete: {"the pipeline's loader reported problems, and what failed to load is missing from it",
		"fix the problems the loader reported (sluice validate lists them)"},
	CodeRowsVacuumed: {"the rows asked for were removed by vacuum: their generation of the table was superseded and past its retention (or, for a flow's stream state, a later snapshot of it holds them)",
		"read a later point of the log (the rows of a table's current generation are never vacuumed), or set a longer retention (delta.deletedFileRetentionDuration) before the next vacuum"},
	CodeUnknownField: {"a record has a field the schema does not have, and schemaEvolutionMode is failOnNewColumns",
		"add the column to the schema, or read with schemaEvolutionMode => 'rescue'"},
	CodeMalformedRecord: {"a record could not be parsed",
		"fix or remove the record, or set the source's rescue option to keep bad records in the _rescued_data column"},
	CodeFileNotExist: {"a file planned for a micro-batch no longer exists",
		"restore the file (a planned batch must read the same files again), or reset the flow's checkpoint"},
	CodeFileUnreadable:      {"a file could not be read", "check that the file is complete and in the declared format"},
	CodePathNotFound:        {"a source path does not exist", "create the directory or correct the path"},
	CodeSourceOptionInvalid: {"a source option is invalid", "see the source's documentation for its options"},
	CodeEventNotFound:       {"the log holds no event at that position", "seqs start at 1 and end at the store's last seq"},
	CodeUpstreamReset: {"a table read as a stream was fully refreshed since the reader's last micro-batch",
		"run a full refresh of the reader's target too, or reset the reader's checkpoint"},
	CodeStreamOfMaterializedView: {"a flow reads a materialized view as a stream",
		"read the materialized view as a batch (Read), in a materialized view"},
	CodeParseSyntax: {"the SQL text is not valid", "correct the text at the position shown"},
	CodeExpectationViolation: {"a row failed an expectation whose violation fails the update",
		"correct the source rows, or change the expectation to drop (ON VIOLATION DROP ROW) or warn"},
	CodeUnableToInferSchema: {"the columns of a file read cannot be inferred: there are no files yet, or they hold no columns",
		"add files before the first update, or declare the columns with schema => 'id BIGINT, name STRING'"},
	CodeUnboundParameter:         {"a ${key} parameter has no value in the configuration", "add the key to the pipeline configuration, or correct its name"},
	CodeUnresolvedColumn:         {"an expression names a column the input does not have", "correct the name; the message lists the nearest column"},
	CodeUnresolvedRoutine:        {"an expression calls a function sluice does not know", "correct the function name; see the README for the functions supported"},
	CodeDatatypeMismatch:         {"an operator or function is applied to values of the wrong type", "cast the arguments to the types the operator expects"},
	CodeWrongNumArgs:             {"a function is called with the wrong number of arguments", "see the function's reference for its arguments"},
	CodeArithmeticOverflow:       {"an arithmetic result does not fit its type", "cast the operands to double, or use try_ functions to get NULL instead"},
	CodeDivideByZero:             {"a value was divided by zero", "use try_divide, or guard the divisor with nullif(divisor, 0)"},
	CodeUserRaisedException:      {"the query raised an error of its own (raise_error or assert_true)", "see the message the query gave; the rows that raised it are the ones to look at"},
	CodeCastInvalidInput:         {"a value cannot be cast to the target type", "correct the value, or use try_cast to get NULL instead"},
	CodeCastOverflow:             {"a value is out of the range of the target type of a cast", "cast to a wider type, or use try_cast to get NULL instead"},
	CodeInvalidNumericLiteral:    {"a number literal is out of the range of its type", "drop the suffix (L, S or Y) or write a wider type's suffix"},
	CodeAESKeyLength:             {"an AES key is not 16, 24 or 32 bytes long", "give a key of 16, 24 or 32 bytes"},
	CodeAESCryptoError:           {"a value did not decrypt", "check the key, mode and padding, or use try_aes_decrypt to get NULL instead"},
	CodeAESUnsupportedMode:       {"the AES mode and padding are not one Spark runs", "use GCM with NONE padding, or CBC or ECB with PKCS padding"},
	CodeInvalidFormat:            {"a number format is not valid", "write the format with 0 and 9 for digits, , or G between them, . or D for the point, a leading $, and S, MI or PR for the sign"},
	CodeFormatMismatchInput:      {"a value does not match its number format", "correct the value or the format, or use try_to_number to get NULL instead"},
	CodeConversionInvalidInput:   {"a value is malformed for the format it is read in", "correct the value or the format, or use the try_ form of the function to get NULL instead"},
	CodeInvalidURL:               {"a URL is not valid", "correct the URL, or use try_parse_url to get NULL instead"},
	CodeInvalidVariantCast:       {"a variant value cannot be cast to the type asked", "ask for another type, or use try_variant_get or try_cast to get NULL instead"},
	CodeVariantDuplicateKey:      {"a JSON object has a key twice, which a variant cannot hold", "remove the duplicate key from the JSON"},
	CodeInvalidVariantPath:       {"a variant path is not valid", "write the path as $ then .key, ['key'] or [n] steps, as a string literal"},
	CodeNumericOutOfRange:        {"a decimal value has more digits than its type holds", "cast to a decimal of more precision (at most 38 digits), or use try_cast or try_ arithmetic to get NULL instead"},
	CodeDecimalPrecisionExceeded: {"a decimal needs more than 38 digits", "use at most 38 digits, or a DOUBLE where an approximate value will do"},
	CodeInvalidLikePattern:       {"a LIKE pattern or its escape character is invalid", "end the pattern with a complete escape sequence and use a single-character ESCAPE"},
	CodeInvalidPattern:           {"a regular expression is not valid", "correct the pattern; the message says where it is wrong"},
	CodeRegexGroupIndex:          {"a regular expression group index is out of range", "use a group index between 0 and the number of groups in the pattern"},
	CodeInvalidLength:            {"a function's result would be too long", "use a smaller length or repeat count"},
	CodeUnsupportedRegex: {"a regular expression uses Java syntax that sluice's RE2 engine does not have",
		"rewrite the pattern without lookahead or lookbehind, backreferences, possessive quantifiers, atomic groups or class intersections, e.g. match more and cut with regexp_extract groups"},
	CodeInvalidIndexOfZero: {"an index of 0 was given where indexes start at 1", "use 1 for the first element or -1 for the last"},
	CodeUnsupportedFormat: {"a format string uses a conversion sluice does not support",
		"use %s, %d, %f, %e, %x, %o, %c, %b or %% with flags - 0 + space , and a width or precision"},
	CodePipelineConfigInvalid: {"pipeline.yaml is not valid",
		"correct the field at the line shown; see the README for the fields of pipeline.yaml"},
	CodePipelineNotFound: {"no pipeline.yaml was found",
		"run the command in a pipeline directory (or below one), pass -p DIR, or create a pipeline with sluice init NAME"},
	CodeLibraryNotFound: {"a library of pipeline.yaml matches no file",
		"correct the path or the glob, or remove the library from pipeline.yaml"},
	CodeAggregateNotAllowed: {"an aggregate function is used where only row-by-row expressions are allowed",
		"move the aggregate into a query's SELECT list or HAVING clause, or remove it"},
	CodeNestedAggregate: {"an aggregate function is called inside the argument of another aggregate",
		"compute the inner aggregate in a subquery and aggregate its result in the outer query"},
	CodeInvalidWithinGroup: {"WITHIN GROUP is missing, misplaced or malformed in an aggregate call",
		"use WITHIN GROUP (ORDER BY x) with percentile_cont, percentile_disc and mode only, with one ordering and without DISTINCT"},
	CodeUnsupportedCallSyntax: {"a function is called with a clause it does not support",
		"remove the clause (IGNORE NULLS is for first, last, any_value and the window functions)"},
	CodeInvalidWhereCondition: {"a WHERE condition contains an aggregate, window or generator function",
		"filter on aggregates in HAVING, on window functions in QUALIFY, and move generators to the SELECT list or a LATERAL VIEW"},
	CodeGroupByAggregate: {"GROUP BY contains an aggregate function",
		"group by the columns or row expressions only; aggregates belong in the SELECT list or HAVING"},
	CodeWindowInStreaming: {"a window function (OVER) is used in a query that reads a stream",
		"read the source as a batch in a materialized view, or aggregate over a time window with window() and a watermark"},
	CodeWindowFunctionWithoutOver: {"a window function is called without an OVER clause",
		"add OVER (PARTITION BY ... ORDER BY ...) to the call"},
	CodeNegativeFrequency: {"a frequency of percentile is negative",
		"give every row a frequency of 0 or more (0 leaves the row out)"},
	CodeCannotParseTimestamp:      {"a string does not match the datetime pattern it is parsed with", "correct the value or the pattern, or use try_to_timestamp to get NULL instead"},
	CodeDatetimeOverflow:          {"a date or timestamp computation goes beyond the supported range", "check the operands; dates and timestamps end at the years -290308 and 294247"},
	CodeDatetimeFieldOutOfRange:   {"a date or time field is out of its range", "correct the field (month 1-12, day 1-31, hour 0-23, ...), or use the try_ variant"},
	CodeInvalidDatetimePattern:    {"a datetime pattern uses a letter or form that is not supported", "see Spark's datetime pattern reference; quote literal text with single quotes"},
	CodeInvalidIntervalFormat:     {"an interval is not written in a valid form", "write e.g. INTERVAL '1-2' YEAR TO MONTH or INTERVAL 3 HOURS; do not mix year-month with day-time units"},
	CodeInvalidParameterValueUnit: {"a datetime function was given a unit it does not know", "use YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND"},
	CodeIllegalDayOfWeek:          {"next_day was given a day of the week it does not know", "use a day name or its first two or three letters: MO, TUE or WEDNESDAY"},
	CodeInvalidExtractField:       {"EXTRACT or date_part names a field the value does not have", "use YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFWEEK, DOY, HOUR, MINUTE or SECOND"},
	CodeIntervalDividedByZero:     {"an interval was divided by zero", "guard the divisor with nullif(divisor, 0)"},
	CodeInvalidTimeZone:           {"the session time zone cannot be resolved", "use a region id like America/Los_Angeles, UTC, or an offset like +02:00"},
	CodeProcessEnded: {"the process running an update ended before the update did",
		"nothing is lost: the next update reruns what was planned and not committed; see the logs of the ended process for why it stopped"},
	CodeUpdateRunning: {"another update of this pipeline's storage is running",
		"wait for it to finish, or cancel it, before starting another"},
	CodeCheckpointStoreUnavailable: {"the pipeline to import a checkpoint from could not be read",
		"check the storage path of import_checkpoint and that no other process holds it"},
	CodeSourceUnavailable:      {"the system a source reads from does not answer, or answered with an error", "check that it runs and that the address in the source's options is right; the flow retries by itself"},
	CodeSourceDataLoss:         {"records a micro-batch was to read are gone from the topic (retention, or the topic was recreated)", "set failOnDataLoss => 'false' to read what is left, or run a full refresh of the flow"},
	CodeCDCUnchangedToast:      {"an update left a large (TOASTed) value as it was, and Postgres sent no value for it", "set the table's REPLICA IDENTITY FULL, so that updates carry the row before them"},
	CodeReplicationSlotMissing: {"the replication slot a change capture flow reads from was dropped", "run a full refresh of the flow: it makes the slot again; load the rows changed in between with a once flow"},
	CodeHookDeliveryFailed:     {"an event hook did not take an event after its last retry", "check that the hook's receiver runs and answers 2xx; the event stays in the log, and the hook goes on with the next"},
	CodeSpoolCorrupt:           {"a file of a message source's spool (the messages taken from the broker and not yet committed) does not read back as written", "restore the spool directory from a backup, or delete it and run a full refresh of the flow: the messages in it are no longer in the broker"},
	CodeCheckpointInvalid:      {"a source offset recorded in the checkpoint does not read", "reset the flow's checkpoint (sluice run --reset-checkpoint FLOW) to read from the source's start"},
	CodeSecretNotSet:           {"an option names a secret in an environment variable that is not set", "set the variable in the environment of the process that runs the pipeline"},
	CodeSinkOption:             {"a sink's options are missing one it needs, or have one it does not take or a value it cannot use", "fix the sink's OPTIONS as the message says"},
	CodeSinkWriteFailed:        {"a sink could not write a micro-batch", "fix the cause the message names (a full disk, permissions); the batch is written again on retry, and nothing is duplicated"},
	CodeInvalidOptions:         {"a function's options are not map('key', 'value', ...) of string literals, or an option's value is not one it takes", "write the options as map('mode', 'FAILFAST'), with a value the message names"},
	CodeUnsupportedDataType:    {"a column has a type the output format cannot hold", "cast the column to a type the format holds (a string, a number), or leave it out"},
	CodeAmbiguousReference:     {"a column name matches columns of more than one FROM item", "qualify the column with its table or alias, as in t.col"},
	CodeMissingAggregation: {"a query that aggregates selects a column that is neither grouped nor aggregated",
		"add the column to GROUP BY, or wrap it in an aggregate such as any_value(col)"},
	CodeNumColumnsMismatch: {"the queries of a set operation have different numbers of columns", "select the same number of columns on each side of UNION, INTERSECT or EXCEPT"},
	CodeIncompatibleSetTypes: {"a column of a set operation has types that cannot be combined",
		"cast the column to one type on both sides"},
	CodeOrdinalOutOfRange: {"ORDER BY names a column position the select list does not have", "use a position between 1 and the number of selected columns"},
	CodeGroupOrdinalRange: {"GROUP BY names a column position the select list does not have", "use a position between 1 and the number of selected columns"},
	CodeInvalidLimit:      {"LIMIT or OFFSET is not a constant non-negative integer", "write a non-negative integer constant"},
	CodeScalarSubqueryRows: {"a scalar subquery returned more than one row",
		"make the subquery return one row, for example with an aggregate or LIMIT 1"},
	CodeInvalidSubquery:  {"a subquery is used where its shape does not fit", "a scalar subquery must return one column; IN (subquery) one column per compared value"},
	CodeUnsupportedQuery: {"the query uses a feature sluice does not run yet", "rewrite the query without it; the message names the feature"},
}

// Error is sluice's error: a code users can search for, a message about this
// case, a hint that says what to do, and the names it concerns. Errors wrap
// their cause, so errors.Is and errors.As see through them.
type Error struct {
	Code      Code
	Message   string   // this occurrence, e.g. `flow "live" depends on unknown flow "backfil"`
	Hint      string   // what to do; defaults to the code's hint
	Names     []string // datasets and flows involved, for tools
	Retriable bool     // a retry may succeed (I/O, a user function), as opposed to a definition error
	Cause     error
	// File, Line and Column locate the error in a definition file
	// (pipeline.yaml, a .sql file) when it has a place there; Line and Column
	// are 1-based, 0 when unknown. The message says the place too: these are
	// for tools.
	File         string
	Line, Column int
}

// Errorf builds an Error with the code's default hint.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: codeInfo[code].hint}
}

// Wrap builds an Error around cause. The message is the cause's text, prefixed
// by context when context is not empty.
func Wrap(code Code, cause error, context string) *Error {
	msg := cause.Error()
	if context != "" {
		msg = context + ": " + msg
	}
	return &Error{Code: code, Message: msg, Hint: codeInfo[code].hint, Cause: cause}
}

// WithNames returns e with names attached.
func (e *Error) WithNames(names ...string) *Error { e.Names = append(e.Names, names...); return e }

// WithHint returns e with its hint replaced.
func (e *Error) WithHint(hint string) *Error { e.Hint = hint; return e }

// At returns e with its place in a definition file.
func (e *Error) At(file string, line, column int) *Error {
	e.File, e.Line, e.Column = file, line, column
	return e
}

// AsRetriable marks e as worth retrying.
func (e *Error) AsRetriable() *Error { e.Retriable = true; return e }

func (e *Error) Error() string {
	if e.Message == "" {
		return "[" + string(e.Code) + "] " + CodeMessage(e.Code)
	}
	return "[" + string(e.Code) + "] " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// CodeMessage is the general sentence for a code.
func CodeMessage(c Code) string { return codeInfo[c].message }

// CodeHint is the default hint for a code.
func CodeHint(c Code) string { return codeInfo[c].hint }

// Codes lists every code sluice reports, sorted.
func Codes() []Code {
	out := make([]Code, 0, len(codeInfo))
	for c := range codeInfo {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// CodeOf returns the code of the first *Error in err's chain, or "" if none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// IsRetriable reports whether err is marked retriable.
func IsRetriable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retriable
}

// Problems is every problem found while validating a pipeline. It is an error
// so it can be returned as one; callers that show problems range over it.
type Problems []*Error

func (p Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s) in the pipeline:", len(p))
	for _, e := range p {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
		if e.Hint != "" {
			b.WriteString(" (hint: ")
			b.WriteString(e.Hint)
			b.WriteString(")")
		}
	}
	return b.String()
}

// Has reports whether any problem carries code.
func (p Problems) Has(code Code) bool {
	for _, e := range p {
		if e.Code == code {
			return true
		}
	}
	return false
}
