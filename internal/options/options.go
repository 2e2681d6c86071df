// Package options spells the options a connector takes, for the message of
// an option it does not.
package options

import (
	"sort"
	"strings"
)

// List is "key (what it is), ..." of known, sorted by key.
func List(known map[string]string) string {
	out := make([]string, 0, len(known))
	for k, v := range known {
		out = append(out, k+" ("+v+")")
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
