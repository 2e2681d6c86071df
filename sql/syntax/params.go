package syntax

import (
	"strings"

	"github.com/sluicehq/sluice/domain"
)

// substitute replaces every ${key} of text with conf[key], before lexing, so a
// parameter may stand anywhere: inside a string, as a whole name or a part of
// one, inside backticks. Keys may contain dots (${my.catalog}). A ${key}
// inside a -- or /* */ comment is left alone, so commented-out lines never
// fail. Inside a quoted string, a backslash before the $ (\${key}) keeps the
// text as it is.
//
// An unknown key is an UNBOUND_SQL_PARAMETER error at the ${. A ${ without a
// closing } on the same line is not a parameter and is left alone, and so
// is ${env:NAME}, a secret from the environment that only a connector's
// options read.
//
// Positions stay those of the original text: s.subst records every
// replacement, and an offset inside a substituted value maps to its ${. A
// value containing line breaks therefore shifts nothing after it, but any
// error inside the value is reported at the ${ itself.
func (s *source) substitute(text string, conf map[string]string) (string, *Error) {
	if !strings.Contains(text, "${") {
		return text, nil
	}
	var out strings.Builder
	out.Grow(len(text))
	const (
		normal = iota
		quoted
		lineComment
		blockComment
	)
	state := normal
	var quote byte
	depth := 0
	last := 0 // text[last:i] not yet copied
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch state {
		case lineComment:
			if c == '\n' {
				state = normal
			}
			continue
		case blockComment:
			if c == '*' && i+1 < len(text) && text[i+1] == '/' {
				i++
				depth--
				if depth == 0 {
					state = normal
				}
			} else if c == '/' && i+1 < len(text) && text[i+1] == '*' {
				i++
				depth++
			}
			continue
		case quoted:
			if c == '\\' && quote != '`' {
				i++
				continue
			}
			if c == quote {
				state = normal
				continue
			}
		case normal:
			switch {
			case c == '-' && i+1 < len(text) && text[i+1] == '-':
				state = lineComment
				i++
				continue
			case c == '/' && i+1 < len(text) && text[i+1] == '*':
				state = blockComment
				depth = 1
				i++
				continue
			case c == '\'' || c == '"' || c == '`':
				state = quoted
				quote = c
				continue
			}
		}
		if c != '$' || i+1 >= len(text) || text[i+1] != '{' {
			continue
		}
		end := strings.IndexAny(text[i+2:], "}\n")
		if end < 0 || text[i+2+end] != '}' {
			continue
		}
		key := text[i+2 : i+2+end]
		if strings.HasPrefix(strings.TrimSpace(key), "env:") {
			// a secret: kept as written, read from the environment only by
			// the connector option that names it (domain.ResolveSecrets),
			// so that it is never in a plan, an event or a message
			i += 2 + end
			continue
		}
		val, ok := conf[key]
		if !ok {
			val, ok = conf[strings.TrimSpace(key)]
		}
		if !ok {
			return "", s.errAt(domain.CodeUnboundParameter, s.posOrig(i),
				"unknown parameter ${"+key+"}", "a key of the pipeline configuration", `"`+key+`"`)
		}
		out.WriteString(text[last:i])
		start := out.Len()
		out.WriteString(val)
		last = i + 2 + end + 1
		s.subst = append(s.subst, substSpan{outStart: start, outEnd: out.Len(), origStart: i, origEnd: last})
		i = last - 1
	}
	if last == 0 {
		return text, nil
	}
	out.WriteString(text[last:])
	return out.String(), nil
}
