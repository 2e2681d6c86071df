package sql

import (
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/domain"
	"github.com/sluicehq/sluice/sql/syntax"
)

func init() {
	register(map[string]builtin{
		"parse_url":     {minArgs: 2, maxArgs: 3, compile: compileParseURL},
		"try_parse_url": {minArgs: 2, maxArgs: 3, compile: compileParseURL},
	})
}

// compileParseURL: parse_url(url, part[, key]) is a part of url: HOST,
// PATH, QUERY (or the value of key in it), REF, PROTOCOL, FILE (the path
// and query), AUTHORITY or USERINFO; NULL for a part the URL lacks or
// another part name. A URL that does not parse is INVALID_URL (NULL from
// try_parse_url), as Spark 4 says.
func compileParseURL(c *compiler, e *syntax.FuncCall, name string) (node, error) {
	args, err := c.argsAs(e, name, domain.KindString, domain.KindString, domain.KindString)
	if err != nil {
		return nil, err
	}
	try, pos := strings.HasPrefix(name, "try_"), e.Pos
	return &valuesNode{args: args, t: domain.TypeString, fails: !try, row: func(a []domain.Value) (domain.Value, error) {
		u, err := url.Parse(a[0].AsString())
		if err != nil {
			if try {
				return domain.Null(), nil
			}
			return domain.Value{}, exprErr(domain.CodeInvalidURL, pos, "the URL '%s' is not valid: %v", a[0].AsString(), err)
		}
		part, ok := urlPart(u, a[1].AsString())
		if !ok {
			return domain.Null(), nil
		}
		if len(a) == 3 && strings.EqualFold(a[1].AsString(), "QUERY") {
			// the value of the first key=value pair of that key, as written
			for _, kv := range strings.Split(part, "&") {
				if k, v, ok := strings.Cut(kv, "="); ok && k == a[2].AsString() {
					return domain.String(v), nil
				}
			}
			return domain.Null(), nil
		}
		return domain.String(part), nil
	}}, nil
}

// urlPart is a part of u as Java's URI gives it (text as written, not
// decoded); ok is false when u has none.
func urlPart(u *url.URL, part string) (string, bool) {
	switch strings.ToUpper(part) {
	case "HOST":
		return u.Hostname(), u.Host != ""
	case "PATH":
		return u.EscapedPath(), true
	case "QUERY":
		return u.RawQuery, u.RawQuery != "" || u.ForceQuery
	case "REF":
		return u.EscapedFragment(), u.Fragment != ""
	case "PROTOCOL":
		return u.Scheme, u.Scheme != ""
	case "FILE":
		if u.RawQuery != "" {
			return u.EscapedPath() + "?" + u.RawQuery, true
		}
		return u.EscapedPath(), true
	case "AUTHORITY":
		if u.User != nil {
			return u.User.String() + "@" + u.Host, true
		}
		return u.Host, u.Host != ""
	case "USERINFO":
		if u.User == nil {
			return "", false
		}
		return u.User.String(), true
	}
	return "", false
}
