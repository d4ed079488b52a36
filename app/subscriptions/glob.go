package subscriptions

import "strings"

// matchGlob matches a root-relative path against a pattern where "*" is
// exactly one segment, "**" any number (zero included) and every other
// segment is literal.
func matchGlob(pattern, path string) bool {
	return matchSegments(segments(pattern), segments(path))
}

func segments(p string) []string {
	if p = normalizePath(p); p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func matchSegments(pattern, path []string) bool {
	for len(pattern) > 0 {
		switch seg := pattern[0]; {
		case seg == "**":
			for skip := 0; skip <= len(path); skip++ {
				if matchSegments(pattern[1:], path[skip:]) {
					return true
				}
			}
			return false
		case len(path) == 0:
			return false
		case seg != "*" && seg != path[0]:
			return false
		}
		pattern, path = pattern[1:], path[1:]
	}
	return len(path) == 0
}

// literalPrefix is the part of a pattern before its first wildcard segment,
// ending in "/" when not empty (the last segment never counts, so a
// literal pattern's own path starts with it too): every match starts with
// it, so a listing needs to look only there.
func literalPrefix(pattern string) string {
	segs := segments(pattern)
	if len(segs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, seg := range segs[:len(segs)-1] {
		if seg == "*" || seg == "**" {
			break
		}
		b.WriteString(seg)
		b.WriteByte('/')
	}
	return b.String()
}
