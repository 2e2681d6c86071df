package syntax

// tokKind is the class of a token. Keywords are not a class of their own:
// they are identifiers, recognised by the parser where it expects them, so a
// column may be named date, window, stream, live or keys.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tIdent          // a plain identifier or a keyword
	tQIdent         // a `backticked` identifier
	tString         // '...' or "..." (text holds the decoded value)
	tNumber         // digits, with a suffix in suffix
	tOp             // punctuation and operators
)

type token struct {
	kind    tokKind
	text    string // identifier name, decoded string, number digits, or operator
	upper   string // for tIdent: text in upper case, to match keywords
	suffix  string // for tNumber: L, S, Y, D, F or BD, upper case
	raw     bool   // for tString: r'...' (no escapes)
	cellEnd bool   // for the ";" standing for a notebook cell boundary
	off     int    // byte offsets in the substituted text
	end     int
	pos     Pos // in the original text
}

// describe says what the token is, for "found ..." in errors.
func (t *token) describe(text string) string {
	switch {
	case t.kind == tEOF:
		return "end of input"
	case t.cellEnd:
		return "end of notebook cell"
	}
	s := text[t.off:t.end]
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	if t.kind == tString {
		return "string " + s
	}
	return `"` + s + `"`
}
