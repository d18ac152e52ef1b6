// Package suggest finds the known word closest to a misspelt one, for "did you mean" hints.
package suggest

import (
	"strings"
	"unicode/utf8"
)

// Closest is the candidate nearest to word, case folded, by edit distance (insertions,
// deletions, substitutions and adjacent transpositions), when it is near enough to be a
// misspelling (at most a third of the word's length, and at least 1), or one contains the
// other (retries → maxRetries). ok is false when none is. Ties go to the earlier candidate.
func Closest(word string, candidates []string) (best string, ok bool) {
	w := strings.ToLower(word)
	bestD := -1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == w {
			return c, true
		}
		d := distance(w, lc)
		limit := max(utf8.RuneCountInString(w)/3, 1)
		near := d <= limit
		if !near && utf8.RuneCountInString(w) >= 4 && (strings.Contains(lc, w) || strings.Contains(w, lc) && utf8.RuneCountInString(lc) >= 4) {
			near, d = true, limit+1 // a part of the name: a weaker match than a misspelling
		}
		if near && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best, bestD >= 0
}

// distance is the optimal string alignment distance of a and b (in runes).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
