package domain

// The codes of the collection, lambda, generator and JSON functions, kept
// apart from errors.go so that each family of functions adds its own.
const (
	CodeInvalidArrayIndex            Code = "INVALID_ARRAY_INDEX"
	CodeInvalidArrayIndexElementAt   Code = "INVALID_ARRAY_INDEX_IN_ELEMENT_AT"
	CodeNullMapKey                   Code = "NULL_MAP_KEY"
	CodeDuplicatedMapKey             Code = "DUPLICATED_MAP_KEY"
	CodeInvalidParameterValue        Code = "INVALID_PARAMETER_VALUE"
	CodeCollectionSizeLimit          Code = "COLLECTION_SIZE_LIMIT_EXCEEDED"
	CodeUnsupportedGenerator         Code = "UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS"
	CodeInvalidSchema                Code = "INVALID_SCHEMA"
	CodeComparatorReturnsNull        Code = "COMPARATOR_RETURNS_NULL"
	CodeAmbiguousField               Code = "AMBIGUOUS_REFERENCE_TO_FIELDS"
	CodeInvalidParameterValueCharset Code = "INVALID_PARAMETER_VALUE.CHARSET"
	CodeMalformedCharacterCoding     Code = "MALFORMED_CHARACTER_CODING"
	CodeCannotDecodeURL              Code = "CANNOT_DECODE_URL"
	CodeInvalidUTF8String            Code = "INVALID_UTF8_STRING"
)

func init() {
	for c, t := range map[Code]codeText{
		CodeInvalidArrayIndex: {"an array subscript is outside the array",
			"use an index from 0 to the array's size - 1, or try_element_at (1-based) to get NULL instead"},
		CodeInvalidArrayIndexElementAt: {"an element_at index is outside the array",
			"use an index from 1 to the array's size (or negative, from the end), or try_element_at to get NULL instead"},
		CodeNullMapKey:       {"a map key is NULL", "filter out or replace the NULL keys (coalesce) before building the map"},
		CodeDuplicatedMapKey: {"a map would have the same key twice", "remove the duplicate keys before building the map"},
		CodeInvalidParameterValue: {"a function argument has a value the function does not accept",
			"see the function's reference for the values it accepts"},
		CodeCollectionSizeLimit: {"an array would have more elements than an array may hold",
			"build a smaller array, or split the work over several rows"},
		CodeUnsupportedGenerator: {"a generator (explode, inline, ...) is used inside another expression",
			"call the generator at the top of a SELECT item or in LATERAL VIEW, and use its output columns in other expressions"},
		CodeComparatorReturnsNull: {"the comparator of array_sort returned NULL",
			"make the comparator return an integer for every pair, NULL elements included (coalesce)"},
		CodeAmbiguousField: {"a JSON key matches several keys that differ only in case",
			"write the key in brackets and quotes (col:['Key']) to match its case exactly"},
		CodeInvalidParameterValueCharset: {"decode or encode names a character set they do not know",
			"name one of US-ASCII, ISO-8859-1, UTF-8, UTF-16BE, UTF-16LE, UTF-16, UTF-32"},
		CodeMalformedCharacterCoding: {"the bytes are not text in the character set named, or the text cannot be written in it",
			"name the character set the data is in, or use try_ and filter the rows out"},
		CodeCannotDecodeURL: {"url_decode met text that is not a URL encoding (a % not followed by two hex digits)",
			"use try_url_decode to get NULL for such rows"},
		CodeInvalidUTF8String: {"validate_utf8 met bytes that are not UTF-8",
			"use make_valid_utf8 to replace them, or try_validate_utf8 to get NULL"},
		CodeInvalidSchema: {"a schema text could not be read", "write the schema in DDL, as 'a INT, b STRING' or 'STRUCT<a: INT, b: STRING>'"},
	} {
		codeInfo[c] = t
	}
}
