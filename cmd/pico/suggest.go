package main

import (
	"flag"
	"fmt"
	"strings"
)

// undefinedFlagPrefix starts the flag package's error for an unknown flag.
const undefinedFlagPrefix = "flag provided but not defined: "

// flagMistake rewords a parse error: an unknown flag names the nearest
// flag of fs, if one is near.
func flagMistake(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlagPrefix)
	if !ok {
		return err.Error()
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	msg := "unknown flag --" + name
	if near := nearest(name, names); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", dashed(near))
	}
	return msg
}

// dashed is a flag as the help writes it: -f for a short one, --name.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// nearest is the candidate closest to word by edit distance, "" when
// none is close enough to be a likely typo (a third of the word's length,
// and at least one edit).
func nearest(word string, candidates []string) string {
	best, bestDist := "", max(1, len(word)/3)+1
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, by bytes: flag and
// command names are ASCII.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
