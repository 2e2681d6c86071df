package sql

import (
	"errors"
	"testing"
)

// dateCases run on the test row (dt = 2024-02-29, ts = 2024-02-29
// 13:14:15.123456 UTC) in the default UTC session.
var dateCases = []struct{ src, want string }{
	// intervals
	{"INTERVAL 1 DAY", "interval day to second:INTERVAL '1 00:00:00' DAY TO SECOND"},
	{"INTERVAL '1' HOUR", "interval day to second:INTERVAL '0 01:00:00' DAY TO SECOND"},
	{"INTERVAL 2 HOURS 30 MINUTES", "interval day to second:INTERVAL '0 02:30:00' DAY TO SECOND"},
	{"INTERVAL '1-2' YEAR TO MONTH", "interval year to month:INTERVAL '1-2' YEAR TO MONTH"},
	{"INTERVAL '-1-2' YEAR TO MONTH", "interval year to month:INTERVAL '-1-2' YEAR TO MONTH"},
	{"INTERVAL '1 10:30' DAY TO MINUTE", "interval day to second:INTERVAL '1 10:30:00' DAY TO SECOND"},
	{"INTERVAL '10:30:15.5' HOUR TO SECOND", "interval day to second:INTERVAL '0 10:30:15.5' DAY TO SECOND"},
	{"INTERVAL 1.5 SECONDS", "interval day to second:INTERVAL '0 00:00:01.5' DAY TO SECOND"},
	{"INTERVAL '1 day 2 hours'", "interval day to second:INTERVAL '1 02:00:00' DAY TO SECOND"},
	{"INTERVAL 1 YEAR 2 HOURS", "INVALID_INTERVAL_FORMAT"},
	{"INTERVAL '1-13' YEAR TO MONTH", "INVALID_INTERVAL_FORMAT"},
	{"INTERVAL 1.5 YEARS", "interval year to month:INTERVAL '1-6' YEAR TO MONTH"},
	{"INTERVAL 0.5 MONTH", "INVALID_INTERVAL_FORMAT"},
	{"INTERVAL 0.0000001 SECOND", "INVALID_INTERVAL_FORMAT"},
	{"INTERVAL 9223372036854775807 SECONDS", "ARITHMETIC_OVERFLOW"},
	{"INTERVAL 2147483648 MONTHS", "ARITHMETIC_OVERFLOW"},
	{"-INTERVAL '1-2' YEAR TO MONTH", "interval year to month:INTERVAL '-1-2' YEAR TO MONTH"},
	{"INTERVAL 1 DAY > INTERVAL 23 HOURS", "boolean:true"},
	{"INTERVAL 1 MONTH = INTERVAL '0-1' YEAR TO MONTH", "boolean:true"},
	{"CAST(INTERVAL '1-2' YEAR TO MONTH AS STRING)", "string:'INTERVAL '1-2' YEAR TO MONTH'"},
	// arithmetic
	{"ts + INTERVAL 1 HOUR", "timestamp:2024-02-29T14:14:15.123456Z"},
	{"ts - INTERVAL '1' DAY", "timestamp:2024-02-28T13:14:15.123456Z"},
	{"ts + INTERVAL 1 YEAR", "timestamp:2025-02-28T13:14:15.123456Z"},
	{"TIMESTAMP '2024-01-31 10:00:00' + INTERVAL 1 MONTH", "timestamp:2024-02-29T10:00:00Z"},
	{"dt + 1", "date:2024-03-01"},
	{"1 + dt", "date:2024-03-01"},
	{"dt - 60", "date:2023-12-31"},
	{"dt + INTERVAL 1 YEAR", "date:2025-02-28"},
	{"dt + INTERVAL 2 DAYS", "date:2024-03-02"},
	{"dt + INTERVAL 1 HOUR", "timestamp:2024-02-29T01:00:00Z"},
	{"dt - DATE '2024-01-01'", "interval day to second:INTERVAL '59 00:00:00' DAY TO SECOND"},
	{"ts - TIMESTAMP '2024-02-29 00:00:00'", "interval day to second:INTERVAL '0 13:14:15.123456' DAY TO SECOND"},
	{"ts - dt", "interval day to second:INTERVAL '0 13:14:15.123456' DAY TO SECOND"},
	{"INTERVAL 1 DAY + INTERVAL 1 HOUR", "interval day to second:INTERVAL '1 01:00:00' DAY TO SECOND"},
	{"INTERVAL '1-2' YEAR TO MONTH - INTERVAL 3 MONTHS", "interval year to month:INTERVAL '0-11' YEAR TO MONTH"},
	{"INTERVAL 1 HOUR * 2.5", "interval day to second:INTERVAL '0 02:30:00' DAY TO SECOND"},
	{"3 * INTERVAL 1 MONTH", "interval year to month:INTERVAL '0-3' YEAR TO MONTH"},
	{"INTERVAL 1 MONTH / 2", "interval year to month:INTERVAL '0-1' YEAR TO MONTH"},
	{"INTERVAL 1 DAY / 0", "INTERVAL_DIVIDED_BY_ZERO"},
	{"INTERVAL 1 DAY + 1", "DATATYPE_MISMATCH"},
	{"INTERVAL 1 DAY + INTERVAL 1 MONTH", "DATATYPE_MISMATCH"},
	{"dt + n", "date:NULL"},
	{"ts + NULL", "timestamp:NULL"},
	{"DATE '2024-01-01' + 2147483647", "DATETIME_OVERFLOW"},
	{"INTERVAL 106751991 DAYS * 2", "ARITHMETIC_OVERFLOW"},
	// functions: Spark's reference examples
	{"to_date('2009-07-30 04:17:52')", "date:2009-07-30"},
	{"to_date('2016-12-31', 'yyyy-MM-dd')", "date:2016-12-31"},
	{"to_timestamp('2016-12-31 00:12:00')", "timestamp:2016-12-31T00:12:00Z"},
	{"to_timestamp('2016-12-31', 'yyyy-MM-dd')", "timestamp:2016-12-31T00:00:00Z"},
	{"to_timestamp('x', 'yyyy-MM-dd')", "CANNOT_PARSE_TIMESTAMP"},
	{"try_to_timestamp('x', 'yyyy-MM-dd')", "timestamp:NULL"},
	{"try_to_timestamp('foo')", "timestamp:NULL"},
	{"to_date('x')", "CAST_INVALID_INPUT"},
	{"to_date('2016', 'yyyyQQ')", "CANNOT_PARSE_TIMESTAMP"},
	{"to_date('20240229', 'yyyyMMdd')", "date:2024-02-29"},
	{"to_date('2023-02-29', 'yyyy-MM-dd')", "CANNOT_PARSE_TIMESTAMP"},
	{"to_timestamp('2024-03-10 02:30:00 +05:00', 'yyyy-MM-dd HH:mm:ss XXX')", "timestamp:2024-03-09T21:30:00Z"},
	{"to_timestamp('12/01/2024 3:04 PM', 'MM/dd/yyyy h:mm a')", "timestamp:2024-12-01T15:04:00Z"},
	{"to_date('2024-01-01', 'yyyy-MM-dd bb')", "INVALID_DATETIME_PATTERN"},
	{"date_format('2016-04-08', 'y')", "string:'2016'"},
	{"date_format(ts, 'yyyy-MM-dd HH:mm:ss.SSS')", "string:'2024-02-29 13:14:15.123'"},
	{"date_format(ts, 'EEE, d MMM yyyy hh:mm a XXX')", "string:'Thu, 29 Feb 2024 01:14 PM Z'"},
	{"date_format(ts, 'EEEE MMMM D Q \\'quoted\\' k')", "string:'Thursday February 60 1 quoted 13'"},
	{"date_format(ns, 'yyyy')", "string:NULL"},
	{"date_format(ts, 'yyyy-ww')", "INVALID_DATETIME_PATTERN"},
	{"date_add('2016-07-30', 1)", "date:2016-07-31"},
	{"date_sub('2016-07-30', 1)", "date:2016-07-29"},
	{"date_add(dt, n)", "date:NULL"},
	{"add_months('2016-08-31', 1)", "date:2016-09-30"},
	{"add_months(dt, 12)", "date:2025-02-28"},
	{"add_months(dt, -1)", "date:2024-01-29"},
	{"datediff('2009-07-31', '2009-07-30')", "bigint:1"},
	{"datediff('2009-07-30', '2009-07-31')", "bigint:-1"},
	{"last_day('2009-01-12')", "date:2009-01-31"},
	{"last_day(dt)", "date:2024-02-29"},
	{"year('2016-07-30')", "bigint:2016"},
	{"quarter('2016-08-31')", "bigint:3"},
	{"month('2016-07-30')", "bigint:7"},
	{"day('2009-07-30')", "bigint:30"},
	{"dayofmonth(dt)", "bigint:29"},
	{"dayofweek('2009-07-30')", "bigint:5"},
	{"dayofyear('2016-04-09')", "bigint:100"},
	{"weekday('2009-07-30')", "bigint:3"},
	{"weekofyear('2008-02-20')", "bigint:8"},
	{"weekofyear('2021-01-01')", "bigint:53"},
	{"weekofyear('2024-12-30')", "bigint:1"},
	{"hour('2009-07-30 12:58:59')", "bigint:12"},
	{"minute('2009-07-30 12:58:59')", "bigint:58"},
	{"second('2009-07-30 12:58:59')", "bigint:59"},
	{"hour(ts)", "bigint:13"},
	{"EXTRACT(YEAR FROM ts)", "bigint:2024"},
	{"EXTRACT(SECOND FROM ts)", "double:15.123456"},
	{"EXTRACT(DOW FROM dt)", "bigint:5"},
	{"EXTRACT(MONTH FROM INTERVAL '2-11' YEAR TO MONTH)", "bigint:11"},
	{"EXTRACT(HOUR FROM INTERVAL '1 10:30' DAY TO MINUTE)", "bigint:10"},
	{"EXTRACT(FOO FROM ts)", "INVALID_EXTRACT_FIELD"},
	{"date_part('doy', DATE '2019-08-12')", "bigint:224"},
	{"date_part('MINUTE', INTERVAL '123 23:55:59.002001' DAY TO SECOND)", "bigint:55"},
	{"unix_date(DATE '1970-01-02')", "bigint:1"},
	{"date_from_unix_date(1)", "date:1970-01-02"},
	{"unix_seconds(TIMESTAMP '1970-01-01 00:00:01Z')", "bigint:1"},
	{"unix_millis(TIMESTAMP '1970-01-01 00:00:01Z')", "bigint:1000"},
	{"unix_micros(TIMESTAMP '1970-01-01 00:00:01Z')", "bigint:1000000"},
	{"timestamp_seconds(1230219000)", "timestamp:2008-12-25T15:30:00Z"},
	{"timestamp_millis(1230219000123)", "timestamp:2008-12-25T15:30:00.123Z"},
	{"timestamp_micros(1230219000123123)", "timestamp:2008-12-25T15:30:00.123123Z"},
	{"timestamp_seconds(big)", "ARITHMETIC_OVERFLOW"},
	{"make_date(2013, 7, 15)", "date:2013-07-15"},
	{"make_date(2019, 7, NULL)", "date:NULL"},
	{"make_date(2023, 2, 29)", "DATETIME_FIELD_OUT_OF_BOUNDS"},
	{"unix_timestamp('2016-04-08', 'yyyy-MM-dd')", "bigint:1460073600"},
	{"to_unix_timestamp('2016-04-08', 'yyyy-MM-dd')", "bigint:1460073600"},
	{"unix_timestamp(ts)", "bigint:1709212455"},
	{"from_unixtime(0, 'yyyy-MM-dd HH:mm:ss')", "string:'1970-01-01 00:00:00'"},
	{"from_unixtime(0)", "string:'1970-01-01 00:00:00'"},
	{"from_utc_timestamp('2016-08-31', 'Asia/Seoul')", "timestamp:2016-08-31T09:00:00Z"},
	{"to_utc_timestamp('2016-08-31', 'Asia/Seoul')", "timestamp:2016-08-30T15:00:00Z"},
	{"from_utc_timestamp(ts, 'Mars/Base')", "INVALID_CONF_VALUE.TIME_ZONE"},
	{"CAST(ts AS STRING)", "string:'2024-02-29 13:14:15.123456'"},
}

func TestDateFunctions(t *testing.T) {
	for _, tc := range dateCases {
		got, err := evalOne(t, tc.src)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Errorf("%s: error %v is not a *sql.Error", tc.src, err)
				continue
			}
			got = string(se.Code)
		}
		if got != tc.want {
			t.Errorf("%s: got %s, want %s (%v)", tc.src, got, tc.want, err)
		}
	}
}
