package sql

import (
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
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
	{"dt + -INTERVAL 1 DAY", "date:2024-02-28"},
	{"dt + INTERVAL 1 HOUR", "timestamp:2024-02-29T01:00:00Z"},
	{"dt - DATE '2024-01-01'", "interval day to second:INTERVAL '59 00:00:00' DAY TO SECOND"},
	{"ts - TIMESTAMP '2024-02-29 00:00:00'", "interval day to second:INTERVAL '0 13:14:15.123456' DAY TO SECOND"},
	{"ts - dt", "interval day to second:INTERVAL '0 13:14:15.123456' DAY TO SECOND"},
	{"INTERVAL 1 DAY + INTERVAL 1 HOUR", "interval day to second:INTERVAL '1 01:00:00' DAY TO SECOND"},
	{"INTERVAL '1-2' YEAR TO MONTH - INTERVAL 3 MONTHS", "interval year to month:INTERVAL '0-11' YEAR TO MONTH"},
	{"INTERVAL 1 HOUR * 2.5", "interval day to second:INTERVAL '0 02:30:00' DAY TO SECOND"},
	{"INTERVAL 1 MONTH * 2.5", "interval year to month:INTERVAL '0-3' YEAR TO MONTH"},
	{"INTERVAL -1 MONTH * 2.5", "interval year to month:INTERVAL '-0-3' YEAR TO MONTH"},
	{"INTERVAL 3 MONTHS / 2.0", "interval year to month:INTERVAL '0-2' YEAR TO MONTH"},
	{"INTERVAL 1 DAY / 0.0", "INTERVAL_DIVIDED_BY_ZERO"},
	{"INTERVAL 1 DAY * (0.0 / 0.0)", "DIVIDE_BY_ZERO"},
	{"INTERVAL 1 DAY * CAST('NaN' AS DOUBLE)", "ARITHMETIC_OVERFLOW"},
	{"3 * INTERVAL 1 MONTH", "interval year to month:INTERVAL '0-3' YEAR TO MONTH"},
	{"INTERVAL 1 MONTH / 2", "interval year to month:INTERVAL '0-1' YEAR TO MONTH"},
	{"INTERVAL 1 DAY / 0", "INTERVAL_DIVIDED_BY_ZERO"},
	{"INTERVAL 1 DAY + 1", "DATATYPE_MISMATCH"},
	{"INTERVAL 1 DAY + INTERVAL 1 MONTH", "DATATYPE_MISMATCH"},
	{"dt + n", "date:NULL"},
	{"ts + NULL", "timestamp:NULL"},
	{"NULL + dt", "date:NULL"},
	{"NULL - ts", "interval day to second:NULL"},
	{"NULL - dt", "interval day to second:NULL"},
	{"INTERVAL 1 DAY * NULL", "interval day to second:NULL"},
	{"NULL * INTERVAL 1 MONTH", "interval year to month:NULL"},
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
	{"date_format(dt, concat('yyyy', '-MM'))", "string:'2024-02'"},
	{"date_format(dt, ns)", "string:NULL"},
	{"date_format(dt, s)", "INVALID_DATETIME_PATTERN"},
	{"from_unixtime(0, concat('HH', ':mm'))", "string:'00:00'"},
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
	{"date_from_unix_date(big)", "DATETIME_OVERFLOW"},
	{"date_from_unix_date(n)", "date:NULL"},
	{"unix_seconds(TIMESTAMP '1970-01-01 00:00:01Z')", "bigint:1"},
	{"unix_millis(TIMESTAMP '1970-01-01 00:00:01Z')", "bigint:1000"},
	{"unix_micros(TIMESTAMP '1970-01-01 00:00:01Z')", "bigint:1000000"},
	{"timestamp_seconds(1230219000)", "timestamp:2008-12-25T15:30:00Z"},
	{"timestamp_millis(1230219000123)", "timestamp:2008-12-25T15:30:00.123Z"},
	{"timestamp_micros(1230219000123123)", "timestamp:2008-12-25T15:30:00.123123Z"},
	{"timestamp_seconds(big)", "ARITHMETIC_OVERFLOW"},
	{"timestamp_seconds(1230219000.123)", "timestamp:2008-12-25T15:30:00.123Z"},
	{"timestamp_seconds(CAST('NaN' AS DOUBLE))", "timestamp:NULL"},
	{"timestamp_seconds(1e300)", "ARITHMETIC_OVERFLOW"},
	{"timestamp_seconds(d)", "timestamp:1970-01-01T00:00:02.5Z"},
	{"make_date(2013, 7, 15)", "date:2013-07-15"},
	{"make_date(2019, 7, NULL)", "date:NULL"},
	{"make_date(2023, 2, 29)", "DATETIME_FIELD_OUT_OF_BOUNDS"},
	{"unix_timestamp('2016-04-08', 'yyyy-MM-dd')", "bigint:1460073600"},
	{"to_unix_timestamp('2016-04-08', 'yyyy-MM-dd')", "bigint:1460073600"},
	{"unix_timestamp('2016-04-08', concat('yyyy-MM', '-dd'))", "bigint:1460073600"},
	{"to_timestamp('2016', ns)", "timestamp:NULL"},
	{"to_timestamp('2016', s)", "INVALID_DATETIME_PATTERN"},
	{"to_date('2016-04', concat('yyyy', '-MM'))", "date:2016-04-01"},
	{"unix_timestamp(ts)", "bigint:1709212455"},
	{"from_unixtime(0, 'yyyy-MM-dd HH:mm:ss')", "string:'1970-01-01 00:00:00'"},
	{"from_unixtime(0)", "string:'1970-01-01 00:00:00'"},
	{"from_utc_timestamp('2016-08-31', 'Asia/Seoul')", "timestamp:2016-08-31T09:00:00Z"},
	{"to_utc_timestamp('2016-08-31', 'Asia/Seoul')", "timestamp:2016-08-30T15:00:00Z"},
	{"from_utc_timestamp(ts, 'Mars/Base')", "INVALID_CONF_VALUE.TIME_ZONE"},
	{"CAST(ts AS STRING)", "string:'2024-02-29 13:14:15.123456'"},
	{"trunc('2019-08-04', 'week')", "date:2019-07-29"},
	{"trunc('2019-08-04', 'quarter')", "date:2019-07-01"},
	{"trunc('2009-02-12', 'MM')", "date:2009-02-01"},
	{"trunc('2015-10-27', 'YEAR')", "date:2015-01-01"},
	{"trunc(dt, 'DD')", "date:NULL"},
	{"date_trunc('YEAR', '2015-03-05T09:32:05.359')", "timestamp:2015-01-01T00:00:00Z"},
	{"date_trunc('MM', '2015-03-05T09:32:05.359')", "timestamp:2015-03-01T00:00:00Z"},
	{"date_trunc('DD', '2015-03-05T09:32:05.359')", "timestamp:2015-03-05T00:00:00Z"},
	{"date_trunc('HOUR', '2015-03-05T09:32:05.359')", "timestamp:2015-03-05T09:00:00Z"},
	{"date_trunc('MILLISECOND', '2015-03-05T09:32:05.123456')", "timestamp:2015-03-05T09:32:05.123Z"},
	{"date_trunc('WEEK', ts)", "timestamp:2024-02-26T00:00:00Z"},
	{"date_trunc('fortnight', ts)", "timestamp:NULL"},
	{"next_day('2015-01-14', 'TU')", "date:2015-01-20"},
	{"next_day(dt, 'thursday')", "date:2024-03-07"},
	{"next_day(dt, 'xx')", "ILLEGAL_DAY_OF_WEEK"},
	{"next_day(dt, ns)", "date:NULL"},
	{"months_between('1997-02-28 10:30:00', '1996-10-30')", "double:3.94959677"},
	{"months_between('1997-02-28 10:30:00', '1996-10-30', false)", "double:3.9495967741935485"},
	{"months_between(dt, '2024-01-31')", "double:1.0"},
	{"months_between('2024-03-29', dt)", "double:1.0"},
	{"timestampadd(HOUR, 8, TIMESTAMP '2022-02-11 20:30:00')", "timestamp:2022-02-12T04:30:00Z"},
	{"dateadd(MICROSECOND, 5, TIMESTAMP '2022-02-28 00:00:00')", "timestamp:2022-02-28T00:00:00.000005Z"},
	{"timestampadd(MONTH, -1, TIMESTAMP '2022-03-31 00:00:00')", "timestamp:2022-02-28T00:00:00Z"},
	{"timestampadd(YEAR, 1, dt)", "timestamp:2025-02-28T00:00:00Z"},
	{"timestampadd('DAY', n, ts)", "timestamp:NULL"},
	{"timestampadd(FORTNIGHT, 1, ts)", "INVALID_PARAMETER_VALUE.DATETIME_UNIT"},
	{"timestampadd(SECOND, big, ts)", "ARITHMETIC_OVERFLOW"},
	{"timestampdiff(HOUR, TIMESTAMP '2022-02-11 20:30:00', TIMESTAMP '2022-02-12 04:30:00')", "bigint:8"},
	{"timestampdiff(MONTH, TIMESTAMP '2022-01-01 00:00:00', TIMESTAMP '2022-02-28 00:00:00')", "bigint:1"},
	{"timestampdiff(YEAR, DATE '2022-01-01', DATE '2021-01-01')", "bigint:-1"},
	{"timestampdiff(MONTH, TIMESTAMP '2024-01-31 12:00:00', TIMESTAMP '2024-02-29 11:00:00')", "bigint:0"},
	{"timestampdiff(DAY, TIMESTAMP '2024-01-01 12:00:00', TIMESTAMP '2024-01-03 11:00:00')", "bigint:1"},
	{"datediff(DAY, DATE '2024-01-01', dt)", "bigint:59"},
	{"datediff(WEEK, DATE '2024-01-01', dt)", "bigint:8"},
	{"timediff(MINUTE, ts, ts + INTERVAL 90 SECONDS)", "bigint:1"},
	{"make_timestamp(2014, 12, 28, 6, 30, 45.887)", "timestamp:2014-12-28T06:30:45.887Z"},
	{"make_timestamp(2019, 6, 30, 23, 59, 60)", "timestamp:2019-07-01T00:00:00Z"},
	{"make_timestamp(2014, 12, 28, 6, 30, 45.887, 'CET')", "timestamp:2014-12-28T05:30:45.887Z"},
	{"make_timestamp(2019, 13, 1, 10, 11, 12, 'PST')", "DATETIME_FIELD_OUT_OF_BOUNDS"},
	{"make_timestamp(2019, 6, 30, 23, 59, 60.5)", "INVALID_FRACTION_OF_SECOND"},
	{"make_timestamp(NULL, 7, 22, 15, 30, 0)", "timestamp:NULL"},
	{"make_ym_interval(1, 2)", "interval year to month:INTERVAL '1-2' YEAR TO MONTH"},
	{"make_ym_interval(-1, 2)", "interval year to month:INTERVAL '-0-10' YEAR TO MONTH"},
	{"make_dt_interval(1, 12, 30, 01.001001)", "interval day to second:INTERVAL '1 12:30:01.001001' DAY TO SECOND"},
	{"make_dt_interval(2)", "interval day to second:INTERVAL '2 00:00:00' DAY TO SECOND"},
	{"make_dt_interval()", "interval day to second:INTERVAL '0 00:00:00' DAY TO SECOND"},
	{"make_interval(1, 2)", "interval year to month:INTERVAL '1-2' YEAR TO MONTH"},
	{"make_interval(0, 0, 1, 1, 12, 30, 1.5)", "interval day to second:INTERVAL '8 12:30:01.5' DAY TO SECOND"},
	{"make_interval(100, 11, 1, 1, 12, 30, 01.001001)", "NOT_IMPLEMENTED"},
	{"make_ym_interval(178956970, 8)", "ARITHMETIC_OVERFLOW"},
	{"make_ym_interval(178956970, 7)", "interval year to month:INTERVAL '178956970-7' YEAR TO MONTH"},
	{"make_dt_interval(big)", "ARITHMETIC_OVERFLOW"},
	{"make_dt_interval(106751991, 4, 0, 54.775807)", "interval day to second:INTERVAL '106751991 04:00:54.775807' DAY TO SECOND"},
	{"make_dt_interval(106751991, 4, 0, 54.775808)", "ARITHMETIC_OVERFLOW"},
	{"make_dt_interval(1, n)", "interval day to second:NULL"},
	{"window(ts, '5 minutes')", "struct<start: timestamp, end: timestamp>:{2024-02-29T13:10:00Z, 2024-02-29T13:15:00Z}"},
	{"window(ts, '1 hour', '1 hour', '15 minutes')", "struct<start: timestamp, end: timestamp>:{2024-02-29T12:15:00Z, 2024-02-29T13:15:00Z}"},
	{"window(ts, '10 minutes', '5 minutes')", "NOT_IMPLEMENTED"},
	{"window(ts, '1 month')", "INVALID_INTERVAL_FORMAT"},
	{"window(CAST(NULL AS TIMESTAMP), '5 minutes').start", "timestamp:NULL"},
	{"window(ts, '5 minutes').end", "timestamp:2024-02-29T13:15:00Z"},
	{"CAST('1-2' AS INTERVAL YEAR TO MONTH)", "interval year to month:INTERVAL '1-2' YEAR TO MONTH"},
	{"CAST('INTERVAL \\'-1 02:03:04.5\\' DAY TO SECOND' AS INTERVAL DAY TO SECOND)", "interval day to second:INTERVAL '-1 02:03:04.5' DAY TO SECOND"},
	{"CAST('x' AS INTERVAL DAY TO SECOND)", "CAST_INVALID_INPUT"},
	{"TRY_CAST('x' AS INTERVAL YEAR TO MONTH)", "interval year to month:NULL"},
	{"CAST('3' AS INTERVAL MONTH)", "interval year to month:INTERVAL '0-3' YEAR TO MONTH"},
	{"CAST(INTERVAL 1 DAY AS INTERVAL HOUR)", "NOT_IMPLEMENTED"},
}

func TestDateFunctions(t *testing.T) {
	for _, tc := range dateCases {
		got, err := evalOne(t, tc.src)
		if err != nil {
			var se *syntax.Error
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

// evalIn is evalOne under a session time zone and a fixed now.
func evalIn(t *testing.T, zone, src string) (string, error) {
	t.Helper()
	s, err := SessionFromConf(map[string]string{TimeZoneConf: zone})
	if err != nil {
		t.Fatal(err)
	}
	s.Now = time.Date(2024, 3, 10, 9, 30, 0, 0, time.UTC) // 01:30 in Los Angeles, before the change to PDT
	e, err := syntax.ParseExpr("test", src)
	if err != nil {
		t.Fatalf("%s: parse: %v", src, err)
	}
	c, err := CompileSession(e, testSchema, s)
	if err != nil {
		return "", err
	}
	col, err := c.Eval(testBatch(t))
	if err != nil {
		return "", err
	}
	v := col.Value(0)
	out := v.String()
	switch v.Kind() {
	case domain.KindFloat64:
		out = fmtFloat(v.AsFloat())
	case domain.KindString:
		out = "'" + out + "'"
	}
	return c.Type().String() + ":" + out, nil
}

// sessionCases run in the session zone named first: Spark's examples that
// assume America/Los_Angeles, and the daylight-saving changes of 2024 there
// (2024-03-10 02:00 PST -> 03:00 PDT, 2024-11-03 02:00 PDT -> 01:00 PST).
var sessionCases = []struct{ zone, src, want string }{
	{"America/Los_Angeles", "from_unixtime(0, 'yyyy-MM-dd HH:mm:ss')", "string:'1969-12-31 16:00:00'"},
	{"America/Los_Angeles", "unix_timestamp('2016-04-08', 'yyyy-MM-dd')", "bigint:1460098800"},
	{"America/Los_Angeles", "to_utc_timestamp('2016-08-31', 'Asia/Seoul')", "timestamp:2016-08-30T22:00:00Z"},
	{"America/Los_Angeles", "from_utc_timestamp('2016-08-31', 'Asia/Seoul')", "timestamp:2016-08-31T16:00:00Z"},
	{"America/Los_Angeles", "CAST(ts AS STRING)", "string:'2024-02-29 05:14:15.123456'"},
	{"America/Los_Angeles", "CAST(ts AS DATE)", "date:2024-02-29"},
	{"America/Los_Angeles", "CAST(TIMESTAMP '2024-02-29 03:00:00Z' AS DATE)", "date:2024-02-28"},
	{"America/Los_Angeles", "CAST(dt AS TIMESTAMP)", "timestamp:2024-02-29T08:00:00Z"},
	{"America/Los_Angeles", "TIMESTAMP '2024-07-01 12:00:00'", "timestamp:2024-07-01T19:00:00Z"},
	{"America/Los_Angeles", "TIMESTAMP '2024-07-01 12:00:00+02:00'", "timestamp:2024-07-01T10:00:00Z"},
	{"America/Los_Angeles", "ts > '2024-02-29 05:00:00'", "boolean:true"},
	{"America/Los_Angeles", "ts < '2024-02-29 06:00:00'", "boolean:true"},
	{"America/Los_Angeles", "hour(ts)", "bigint:5"},
	{"America/Los_Angeles", "date_format(ts, 'yyyy-MM-dd HH:mm XXX z')", "string:'2024-02-29 05:14 -08:00 PST'"},
	{"America/Los_Angeles", "current_date()", "date:2024-03-10"},
	{"America/Los_Angeles", "current_timestamp()", "timestamp:2024-03-10T09:30:00Z"},
	{"America/Los_Angeles", "now()", "timestamp:2024-03-10T09:30:00Z"},
	{"UTC", "now() = current_timestamp()", "boolean:true"},
	{"Asia/Tokyo", "current_date", "date:2024-03-10"},
	{"-10:00", "current_date()", "date:2024-03-09"},
	// the gap: 02:30 does not exist and moves forward to 03:30 PDT
	{"America/Los_Angeles", "TIMESTAMP '2024-03-10 02:30:00'", "timestamp:2024-03-10T10:30:00Z"},
	// the overlap: 01:30 happens twice; the earlier (PDT) is taken
	{"America/Los_Angeles", "TIMESTAMP '2024-11-03 01:30:00'", "timestamp:2024-11-03T08:30:00Z"},
	// whole days of an interval keep the time of day; the rest is a duration
	{"America/Los_Angeles", "TIMESTAMP '2024-03-09 12:00:00' + INTERVAL 1 DAY", "timestamp:2024-03-10T19:00:00Z"},
	// Spark splits the microseconds, not the units written: 24 hours is a day
	{"America/Los_Angeles", "TIMESTAMP '2024-03-09 12:00:00' + INTERVAL 24 HOURS", "timestamp:2024-03-10T19:00:00Z"},
	{"America/Los_Angeles", "TIMESTAMP '2024-03-09 12:00:00' + INTERVAL 23 HOURS", "timestamp:2024-03-10T19:00:00Z"},
	{"America/Los_Angeles", "TIMESTAMP '2024-03-10 12:00:00' - INTERVAL '1 01:00' DAY TO MINUTE", "timestamp:2024-03-09T19:00:00Z"},
	{"America/Los_Angeles", "TIMESTAMP '2024-02-10 12:00:00' + INTERVAL 1 MONTH", "timestamp:2024-03-10T19:00:00Z"},
	{"America/Los_Angeles", "TIMESTAMP '2024-03-10 12:00:00' - TIMESTAMP '2024-03-09 12:00:00'", "interval day to second:INTERVAL '0 23:00:00' DAY TO SECOND"},
	{"America/Los_Angeles", "hour(TIMESTAMP '2024-03-10 10:30:00Z')", "bigint:3"},
	// into an overlap, the offset of the start is kept (PST here, PDT below)
	{"America/Los_Angeles", "TIMESTAMP '2024-11-02 08:30:00Z' + INTERVAL 1 DAY", "timestamp:2024-11-03T08:30:00Z"},
	{"America/Los_Angeles", "TIMESTAMP '2024-11-04 09:30:00Z' - INTERVAL 1 DAY", "timestamp:2024-11-03T09:30:00Z"},
	{"America/Los_Angeles", "TIMESTAMP '2024-10-03 08:30:00Z' + INTERVAL 1 MONTH", "timestamp:2024-11-03T08:30:00Z"},
	{"America/Los_Angeles", "timestampadd(DAY, -1, TIMESTAMP '2024-11-04 09:30:00Z')", "timestamp:2024-11-03T09:30:00Z"},
	// into a gap, the time moves forward by the gap
	{"America/Los_Angeles", "TIMESTAMP '2024-03-09 10:30:00Z' + INTERVAL 1 DAY", "timestamp:2024-03-10T10:30:00Z"},
	{"America/Los_Angeles", "to_timestamp('2024-03-10 02:30', 'yyyy-MM-dd HH:mm')", "timestamp:2024-03-10T10:30:00Z"},
	{"America/Los_Angeles", "concat(ts, '')", "string:'2024-02-29 05:14:15.123456'"},
	// the branches of a timestamp and a string are strings (commonType)
	{"America/Los_Angeles", "coalesce(ts, '2024-01-01 00:00:00')", "string:'2024-02-29 05:14:15.123456'"},
	{"America/Los_Angeles", "if(nb, '2024-01-01 00:00:00', ts)", "string:'2024-02-29 05:14:15.123456'"},
	{"America/Los_Angeles", "CASE WHEN b THEN dt ELSE ts END", "timestamp:2024-02-29T08:00:00Z"},
	{"America/Los_Angeles", "to_date(ts, 'yyyy-MM-dd')", "date:2024-02-29"},
	{"America/Los_Angeles", "to_date(TIMESTAMP '2024-03-01 03:00:00Z')", "date:2024-02-29"},
	{"America/Los_Angeles", "to_timestamp(dt, 'yyyy')", "timestamp:2024-02-29T08:00:00Z"},
	{"+02:00", "CAST(TIMESTAMP '2024-01-01 00:00:00Z' AS STRING)", "string:'2024-01-01 02:00:00'"},
	{"UTC+05:30", "date_format(TIMESTAMP '2024-01-01 00:00:00Z', 'HH:mm xx')", "string:'05:30 +0530'"},
}

func TestSessionTimeZone(t *testing.T) {
	for _, tc := range sessionCases {
		got, err := evalIn(t, tc.zone, tc.src)
		if err != nil {
			got = string(domain.CodeOf(err))
		}
		if got != tc.want {
			t.Errorf("%s in %s: got %s, want %s (%v)", tc.src, tc.zone, got, tc.want, err)
		}
	}
}

func TestSessionFromConf(t *testing.T) {
	for _, zone := range []string{"Mars/Olympus", "+25:00", "", "../etc/passwd", "GMT+1:99"} {
		if _, err := SessionFromConf(map[string]string{TimeZoneConf: zone}); domain.CodeOf(err) != domain.CodeInvalidTimeZone {
			t.Errorf("%q: %v, want %s", zone, err, domain.CodeInvalidTimeZone)
		}
	}
	for zone, offset := range map[string]int{"UTC": 0, "Z": 0, "+02:00": 7200, "-8": -8 * 3600, "GMT+1": 3600, "UTC-03:30": -12600} {
		s, err := SessionFromConf(map[string]string{TimeZoneConf: zone})
		if err != nil {
			t.Errorf("%q: %v", zone, err)
			continue
		}
		if _, off := time.Date(2024, 1, 1, 0, 0, 0, 0, s.TimeZone).Zone(); off != offset {
			t.Errorf("%q: offset %d, want %d", zone, off, offset)
		}
	}
	if s, err := SessionFromConf(nil); err != nil || s.TimeZone != nil {
		t.Errorf("no configuration: %v %v", s, err)
	}
}

// TestNowIsConstant: current_timestamp is one value for a compilation, as
// Spark keeps it for a query.
func TestNowIsConstant(t *testing.T) {
	e, _ := syntax.ParseExpr("t", "current_timestamp()")
	c, err := Compile(e, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Eval(testBatch(t))
	time.Sleep(2 * time.Millisecond)
	b, _ := c.Eval(testBatch(t))
	if a.Ints[0] != b.Ints[0] {
		t.Errorf("now changed between evaluations: %d, %d", a.Ints[0], b.Ints[0])
	}
}

// TestDateBatchMatchesRows: over a batch mixing NULLs, zeros and negative
// dates and timestamps, each row of a batch evaluation is what evaluating
// the row alone gives, in UTC and in Los Angeles.
func TestDateBatchMatchesRows(t *testing.T) {
	batch := fuzzBatch(t)
	rows := make([]*domain.Batch, batch.Len())
	for r := range rows {
		rows[r] = gather(batch, []int{r})
	}
	for _, zone := range []string{"UTC", "America/Los_Angeles"} {
		s, err := SessionFromConf(map[string]string{TimeZoneConf: zone})
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range []string{
			"dt + i", "dt - z", "ts + INTERVAL 1 DAY", "ts - INTERVAL '1-1' YEAR TO MONTH", "dt + INTERVAL 1 MONTH",
			"ts - dt", "dt - DATE '2000-01-01'", "year(dt)", "month(ts)", "dayofweek(dt)", "weekday(dt)", "weekofyear(dt)",
			"hour(ts)", "second(ts)", "EXTRACT(SECOND FROM ts)", "date_format(ts, 'yyyy-MM-dd HH:mm:ss.SSS EEE a')",
			"to_date(ns, 'yyyy')", "try_to_timestamp(s, 'yyyy-MM-dd')", "add_months(dt, i)", "date_add(dt, n)",
			"datediff(dt, ts)", "last_day(dt)", "next_day(dt, 'MON')", "months_between(ts, dt)", "trunc(dt, 'MM')",
			"date_trunc('HOUR', ts)", "timestampadd(MONTH, z, ts)", "timestampdiff(DAY, dt, ts)", "unix_seconds(ts)",
			"timestamp_seconds(z)", "make_date(2024, 2, z)", "window(ts, '5 minutes')", "CAST(ts AS STRING)",
			"CAST(dt AS TIMESTAMP)", "CAST(ts AS DATE)", "INTERVAL 1 HOUR * i", "INTERVAL 1 DAY / z",
			"make_dt_interval(z, i)", "coalesce(ts + INTERVAL 1 DAY, dt)", "CASE WHEN z = 0 THEN NULL ELSE INTERVAL 1 DAY / z END",
		} {
			e, err := syntax.ParseExpr("t", src)
			if err != nil {
				t.Fatal(err)
			}
			c, err := CompileSession(e, testSchema, s)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			all, err := c.Eval(batch)
			if err != nil {
				// then some row alone fails the same way
				failed := false
				for _, row := range rows {
					if _, rerr := c.Eval(row); rerr != nil {
						failed = domain.CodeOf(rerr) == domain.CodeOf(err)
					}
				}
				if !failed {
					t.Errorf("%s in %s: the batch fails with %v, no row alone does", src, zone, err)
				}
				continue
			}
			for r, row := range rows {
				one, err := c.Eval(row)
				if err != nil {
					t.Fatalf("%s row %d: %v", src, r, err)
				}
				if a, b := all.Value(r), one.Value(0); !a.Equal(b) {
					t.Errorf("%s in %s row %d: batch gives %v, the row alone %v", src, zone, r, a, b)
				}
			}
		}
	}
}

// FuzzDatetimePattern: any pattern compiles or is refused with an error,
// never panics; a timestamp formatted with a pattern of numeric fields parses
// back to itself.
func FuzzDatetimePattern(f *testing.F) {
	for _, s := range []string{"yyyy-MM-dd", "yyyy-MM-dd HH:mm:ss.SSSSSS", "EEE, d MMM yyyy hh:mm a XXX", "''", "'a''b'",
		"yyyyMMddHHmmss", "uuuu-MM-dd HH:mm:ss.SSSSSS", "D Q k K xx Z z VV G", "[yyyy]", "'unterminated", "yyyyyyyyyy", "uuuu-LL-dd"} {
		f.Add(s, int64(1709212455123456))
	}
	f.Fuzz(func(t *testing.T, src string, us int64) {
		p, err := compilePattern(src)
		if err != nil {
			return
		}
		us = us % (maxDays * microsPerDay)
		for _, loc := range []*time.Location{time.UTC, time.FixedZone("x", -8*3600)} {
			text := string(p.format(nil, us, loc))
			back, ok := p.parse(text, loc)
			if ok && roundTrips(p) && back != us {
				t.Fatalf("pattern %q: %d formats as %q, parses back as %d", src, us, text, back)
			}
		}
	})
}

// roundTrips reports whether a pattern names every field of a timestamp
// to the microsecond, with separators between the numbers.
func roundTrips(p pattern) bool {
	have := map[byte]bool{}
	for i, f := range p {
		if f.letter != 0 && i+1 < len(p) && p[i+1].letter != 0 {
			return false
		}
		have[f.letter] = true
		if f.letter == 'S' && f.count != 6 || f.letter == 'y' || f.letter == 'X' || f.letter == 'x' || f.letter == 'Z' {
			return false
		}
	}
	return have['u'] && have['M'] && have['d'] && have['H'] && have['m'] && have['s'] && have['S']
}

// FuzzDateEval is FuzzEval's check, seeded with the datetime cases and run
// in a zone with daylight saving: compile errors and evaluation errors carry
// a known code, and results have one value per row.
func FuzzDateEval(f *testing.F) {
	for _, tc := range dateCases {
		f.Add(tc.src)
	}
	for _, tc := range sessionCases {
		f.Add(tc.src)
	}
	batch := fuzzBatch(f)
	s, err := SessionFromConf(map[string]string{TimeZoneConf: "America/Los_Angeles"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := syntax.ParseExpr("fuzz", src)
		if err != nil {
			return
		}
		c, err := CompileSession(e, testSchema, s)
		if err != nil {
			if se, ok := err.(*syntax.Error); !ok || domain.CodeMessage(se.Code) == "" || se.Pos.Line < 1 {
				t.Fatalf("%q: compile error without a known code and position: %v", src, err)
			}
			return
		}
		col, err := c.Eval(batch)
		if err != nil {
			if domain.CodeMessage(domain.CodeOf(err)) == "" {
				t.Fatalf("%q: evaluation error without a known code: %v", src, err)
			}
			return
		}
		if col.Len() != batch.Len() || col.Kind != c.Type().Kind {
			t.Fatalf("%q: %d rows of %s for a batch of %d, type %s", src, col.Len(), col.Kind, batch.Len(), c.Type())
		}
	})
}

// BenchmarkDatetime: datetime functions over 64k timestamps, in UTC and in
// a zone with daylight saving (where every row asks the zone its offset).
func BenchmarkDatetime(b *testing.B) {
	const rows = 1 << 16
	schema := domain.NewSchema(domain.Field{Name: "ts", Type: domain.TypeTimestamp, Nullable: true})
	col := &domain.Column{Kind: domain.KindTimestamp, Ints: make([]int64, rows)}
	for i := range col.Ints {
		col.Ints[i] = 1_700_000_000_000_000 + int64(i)*3_600_000_001
	}
	batch, err := domain.BatchOf(schema, []*domain.Column{col})
	if err != nil {
		b.Fatal(err)
	}
	for _, zone := range []string{"UTC", "America/Los_Angeles"} {
		s, err := SessionFromConf(map[string]string{TimeZoneConf: zone})
		if err != nil {
			b.Fatal(err)
		}
		for _, src := range []string{"year(ts)", "hour(ts)", "ts + INTERVAL 1 MONTH", "date_format(ts, 'yyyy-MM-dd HH:mm:ss')", "date_trunc('DAY', ts)"} {
			e, err := syntax.ParseExpr("bench", src)
			if err != nil {
				b.Fatal(err)
			}
			c, err := CompileSession(e, schema, s)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(zone+"/"+src, func(b *testing.B) {
				for b.Loop() {
					if _, err := c.Eval(batch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
