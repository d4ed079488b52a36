package main

import (
	"flag"
	"fmt"
	"maps"
	"slices"
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
// and at least one edit). Of equally near ones, one that word begins
// wins (us: use, not ls), then the first in order, so the answer does not
// depend on map order.
func nearest(word string, candidates []string) string {
	candidates = slices.Sorted(slices.Values(candidates))
	best, bestDist := "", max(1, len(word)/3)+1
	for _, c := range candidates {
		d := editDistance(word, c)
		if d < bestDist || d == bestDist && best != "" && strings.HasPrefix(c, word) && !strings.HasPrefix(best, word) {
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

// unknownIn is the mistake of a subcommand name not among known's keys,
// naming the nearest one: `unknown admin command "nodez" (did you mean
// nodes?)`.
func unknownIn[V any](kind, name string, known map[string]V) string {
	msg := fmt.Sprintf("unknown %s command %q", kind, name)
	if near := nearest(name, slices.Collect(maps.Keys(known))); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return msg
}
