package syntax

// ParseType reads a type given as text: a column list ('a INT, b
// STRING', a struct of those columns) or a type ('STRUCT<a: INT>',
// 'ARRAY<INT>', 'MAP<STRING, INT>'), as schemas are given to read_files and
// from_json. Its positions name the file name.
func ParseType(name, text string) (*Type, error) {
	s := newSource(name, text)
	toks, err := s.lex(text, nil)
	if err != nil {
		return nil, err
	}
	p := &parser{s: s, text: text, toks: toks}
	var t *Type
	if perr := p.run(func() {
		// one type (ARRAY<INT>, DECIMAL(5, 2), INT) or a column list
		if p.peek().kind == tIdent && (p.isOpAt(1, "<") || p.isOpAt(1, "(") || p.atEndAt(1)) {
			t = p.dataType()
		} else {
			t = &Type{Pos: p.pos(), Name: "STRUCT"}
			for {
				f := &StructField{Pos: p.pos(), Name: p.ident("a column name")}
				p.acceptOp(":")
				f.Type = p.dataType()
				if p.acceptKws("NOT", "NULL") {
					f.NotNull = true
				}
				if p.acceptKws("COMMENT") {
					f.Comment = p.stringLit("a comment")
				}
				t.Fields = append(t.Fields, f)
				if !p.acceptOp(",") {
					break
				}
			}
		}
		if p.peek().kind != tEOF {
			p.fail("`,` or the end of the schema")
		}
	}); perr != nil {
		return nil, perr
	}
	return t, nil
}
