package sql

import (
	"github.com/sluicehq/sluice/domain"
	"testing"
)

// collectionCases are Spark's reference examples of the collection
// functions, then NULLs, empty collections and bad indexes.
var collectionCases = []struct{ src, want string }{
	{"array(1, 2, 3)", "array<bigint>:[1, 2, 3]"},
	{"array(1, 2.5)", "array<double>:[1, 2.5]"},
	{"array(1, NULL)", "array<bigint>:[1, NULL]"},
	{"array()", "array<null>:[]"},
	{"array(array(1), array(2.5))", "array<array<double>>:[[1], [2.5]]"},
	{"array(1, 'a')", "array<string>:[1, a]"},
	{"array(1, true)", "DATATYPE_MISMATCH"},
	{"struct(1, 'a')", "struct<col1: bigint, col2: string>:{1, a}"},
	{"struct(i, s AS name)", "struct<i: bigint, name: string>:{5, Spark SQL}"},
	{"named_struct('a', 1, 'b', 2)", "struct<a: bigint, b: bigint>:{1, 2}"},
	{"named_struct('a', 1, 'b')", "WRONG_NUM_ARGS"},
	{"named_struct(s, 1)", "DATATYPE_MISMATCH"},
	{"map(1.0, '2', 3.0, '4')", "map<double, string>:{1 -> 2, 3 -> 4}"},
	{"map()", "map<null, null>:{}"},
	{"map(1, 'a', 1, 'b')", "DUPLICATED_MAP_KEY"},
	{"map(NULL, 'a')", "NULL_MAP_KEY"},
	{"map(n, 'a')", "NULL_MAP_KEY"},
	{"map(1, 'a', 2)", "WRONG_NUM_ARGS"},
	{"map(map(1, 2), 1)", "DATATYPE_MISMATCH"},
	{"map_from_arrays(array(1.0, 3.0), array('2', '4'))", "map<double, string>:{1 -> 2, 3 -> 4}"},
	{"map_from_arrays(array(1), array())", "INVALID_PARAMETER_VALUE"},
	{"map_from_arrays(array(1, NULL), array(1, 2))", "NULL_MAP_KEY"},
	{"map_from_arrays(NULL, array(1))", "map<null, bigint>:NULL"},
	{"map_keys(map(1, 'a', 2, 'b'))", "array<bigint>:[1, 2]"},
	{"map_values(map(1, 'a', 2, 'b'))", "array<string>:[a, b]"},
	{"map_entries(map(1, 'a', 2, 'b'))", "array<struct<key: bigint, value: string>>:[{1, a}, {2, b}]"},
	{"map_keys(NULL)", "array<null>:NULL"},
	{"map_keys(array(1))", "DATATYPE_MISMATCH"},
	{"map_contains_key(map(1, 'a', 2, 'b'), 1)", "boolean:true"},
	{"map_contains_key(map(1, 'a', 2, 'b'), 3)", "boolean:false"},
	{"size(array('b', 'd', 'c', 'a'))", "bigint:4"},
	{"size(map('a', 1, 'b', 2))", "bigint:2"},
	{"size(NULL)", "bigint:NULL"},
	{"cardinality(array())", "bigint:0"},
	{"size(s)", "DATATYPE_MISMATCH"},
	{"element_at(array(1, 2, 3), 2)", "bigint:2"},
	{"element_at(array(1, 2, 3), -1)", "bigint:3"},
	{"element_at(array(1, 2, 3), 4)", "INVALID_ARRAY_INDEX_IN_ELEMENT_AT"},
	{"element_at(array(1, 2, 3), -4)", "INVALID_ARRAY_INDEX_IN_ELEMENT_AT"},
	{"element_at(array(1, 2, 3), 0)", "INVALID_INDEX_OF_ZERO"},
	{"element_at(array(1, 2, 3), n)", "bigint:NULL"},
	{"element_at(map(1, 'a', 2, 'b'), 2)", "string:'b'"},
	{"element_at(map(1, 'a', 2, 'b'), 3)", "string:NULL"},
	{"try_element_at(array(1, 2, 3), 4)", "bigint:NULL"},
	{"try_element_at(array(1, 2, 3), 0)", "INVALID_INDEX_OF_ZERO"},
	{"try_element_at(map(1, 'a', 2, 'b'), 2)", "string:'b'"},
	{"array(1, 2, 3)[0]", "bigint:1"},
	{"array(1, 2, 3)[3]", "INVALID_ARRAY_INDEX"},
	{"array(1, 2, 3)[-1]", "INVALID_ARRAY_INDEX"},
	{"array(1, 2, 3)[n]", "bigint:NULL"},
	{"array(1, 2, 3)['1']", "bigint:2"},
	{"map('a', 1)['a']", "bigint:1"},
	{"map('a', 1)['b']", "bigint:NULL"},
	{"map('a', 1)[1]", "bigint:NULL"},
	{"map('a', 1)[array(1)]", "DATATYPE_MISMATCH"},
	{"st['y']", "string:'why'"},
	{"named_struct('a', 1)['A']", "bigint:1"},
	{"s[0]", "DATATYPE_MISMATCH"},
	{"array_contains(array(1, 2, 3), 2)", "boolean:true"},
	{"array_contains(array(1, NULL), 2)", "boolean:NULL"},
	{"array_contains(array(1, NULL), 1)", "boolean:true"},
	{"array_contains(array(1, 2), n)", "boolean:NULL"},
	{"array_contains(array(1, 2), 2.0)", "boolean:true"},
	{"array_contains(array(CAST('NaN' AS DOUBLE)), CAST('NaN' AS DOUBLE))", "boolean:true"},
	{"array_contains(array(1), array(1))", "DATATYPE_MISMATCH"},
	{"array_position(array(312, 773, 708, 708), 708)", "bigint:3"},
	{"array_position(array(312, 773, 708, 708), 414)", "bigint:0"},
	{"array_remove(array(1, 2, 3, NULL, 3), 3)", "array<bigint>:[1, 2, NULL]"},
	{"array_distinct(array(1, 2, 3, NULL, 3))", "array<bigint>:[1, 2, 3, NULL]"},
	{"array_union(array(1, 2, 3), array(1, 3, 5))", "array<bigint>:[1, 2, 3, 5]"},
	{"array_intersect(array(1, 2, 3), array(1, 3, 5))", "array<bigint>:[1, 3]"},
	{"array_except(array(1, 2, 3), array(1, 3, 5))", "array<bigint>:[2]"},
	{"array_except(array(1, NULL, NULL), array(1))", "array<bigint>:[NULL]"},
	{"array_union(array(1), array(2.5))", "array<double>:[1, 2.5]"},
	{"array_union(array(1), NULL)", "array<bigint>:NULL"},
	{"array_join(array('hello', 'world'), ' ')", "string:'hello world'"},
	{"array_join(array('hello', NULL ,'world'), ' ')", "string:'hello world'"},
	{"array_join(array('hello', NULL ,'world'), ' ', ',')", "string:'hello , world'"},
	{"array_join(array(1, 2), ns)", "string:NULL"},
	{"array_join(array(1.5, 2), '-')", "string:'1.5-2.0'"},
	{"array_max(array(1, 20, NULL, 3))", "bigint:20"},
	{"array_min(array(1, 20, NULL, 3))", "bigint:1"},
	{"array_max(array(1.0, CAST('NaN' AS DOUBLE)))", "double:NaN"},
	{"array_max(array())", "null:NULL"},
	{"arrays_zip(array(1, 2, 3), array(2, 3, 4))", "array<struct<0: bigint, 1: bigint>>:[{1, 2}, {2, 3}, {3, 4}]"},
	{"arrays_zip(array(1, 2), array('a'))", "array<struct<0: bigint, 1: string>>:[{1, a}, {2, NULL}]"},
	{"slice(array(1, 2, 3, 4), 2, 2)", "array<bigint>:[2, 3]"},
	{"slice(array(1, 2, 3, 4), -2, 2)", "array<bigint>:[3, 4]"},
	{"slice(array(1, 2, 3, 4), 5, 2)", "array<bigint>:[]"},
	{"slice(array(1, 2, 3, 4), -5, 2)", "array<bigint>:[]"},
	{"slice(array(1, 2, 3, 4), 0, 2)", "INVALID_PARAMETER_VALUE"},
	{"slice(array(1, 2, 3, 4), 1, -1)", "INVALID_PARAMETER_VALUE"},
	{"slice(array(1, 2, 3, 4), 2, big)", "array<bigint>:[2, 3, 4]"},
	{"sequence(1, 5)", "array<bigint>:[1, 2, 3, 4, 5]"},
	{"sequence(5, 1)", "array<bigint>:[5, 4, 3, 2, 1]"},
	{"sequence(1, 9, 4)", "array<bigint>:[1, 5, 9]"},
	{"sequence(1, 5, -1)", "INVALID_PARAMETER_VALUE"},
	{"sequence(1, 1, 0)", "array<bigint>:[1]"},
	{"sequence(DATE'2018-01-01', DATE'2018-01-03')", "array<date>:[2018-01-01, 2018-01-02, 2018-01-03]"},
	{"sequence(0, big)", "COLLECTION_SIZE_LIMIT_EXCEEDED"},
	{"sequence(1, n)", "array<bigint>:NULL"},
	{"sort_array(array('b', 'd', NULL, 'c', 'a'), true)", "array<string>:[NULL, a, b, c, d]"},
	{"sort_array(array('b', 'd', NULL, 'c', 'a'), false)", "array<string>:[d, c, b, a, NULL]"},
	{"sort_array(array(2.0, CAST('NaN' AS DOUBLE), -1.0))", "array<double>:[-1, 2, NaN]"},
	{"sort_array(array(1), b)", "DATATYPE_MISMATCH"},
	{"flatten(array(array(1, 2), array(3, 4)))", "array<bigint>:[1, 2, 3, 4]"},
	{"flatten(array(array(1, 2), NULL))", "array<bigint>:NULL"},
	{"flatten(array(1))", "DATATYPE_MISMATCH"},
	{"concat(array(1, 2, 3), array(4, 5), array(6))", "array<bigint>:[1, 2, 3, 4, 5, 6]"},
	{"concat(array(1), NULL)", "array<bigint>:NULL"},
	{"array(1) || array(2.5)", "array<double>:[1, 2.5]"},
	{"concat(array(1), 'a')", "DATATYPE_MISMATCH"},
	{"concat('a', 1)", "string:'a1'"},
	{"size(array(st, NULL))", "bigint:2"},
	{"array(st).x", "DATATYPE_MISMATCH"},
	{"coalesce(NULL, array(1))", "array<bigint>:[1]"},
}

func TestCollectionFunctions(t *testing.T) { checkCollCases(t, collectionCases) }

// checkCollCases checks cases through evalOne: the rendered result, or the error
// code.
func checkCollCases(t *testing.T, cases []struct{ src, want string }) {
	t.Helper()
	for _, tc := range cases {
		got, err := evalOne(t, tc.src)
		if err != nil {
			got = string(domain.CodeOf(err))
		}
		if got != tc.want {
			t.Errorf("%s = %s, want %s (error: %v)", tc.src, got, tc.want, err)
		}
	}
}
