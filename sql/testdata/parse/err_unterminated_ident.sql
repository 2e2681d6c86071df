SELECT `unterminated FROM t;
