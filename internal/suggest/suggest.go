// Package suggest finds the name a user probably meant.
package suggest

import "strings"

// Closest returns the candidate nearest to name by edit distance
// (case-insensitive), or "" when none is near enough to be a likely typo.
func Closest(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := Distance(strings.ToLower(name), strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > len(name)/3+1 {
		return ""
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in characters.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
