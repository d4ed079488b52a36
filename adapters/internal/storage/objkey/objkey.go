// Package objkey checks object store keys, so that every adapter accepts the
// same keys and a key that works on one store works on all of them.
package objkey

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxLen is the longest key in bytes, the S3 limit.
const MaxLen = 1024

// Check returns an error unless key is a valid object key: valid UTF-8 of at
// most MaxLen bytes, no NUL byte, and "/"-separated segments of which none is
// empty, "." or "..". The segment rules keep keys from escaping or aliasing
// one another when they are mapped onto file-system paths.
func Check(key string) error {
	switch {
	case key == "":
		return errors.New("invalid key: empty")
	case len(key) > MaxLen:
		return fmt.Errorf("invalid key: %d bytes, more than %d", len(key), MaxLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("invalid key %q: not UTF-8", key)
	case strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("invalid key %q: contains NUL", key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("invalid key %q: empty segment (leading, trailing or doubled /)", key)
		case ".", "..":
			return fmt.Errorf("invalid key %q: %q segment", key, seg)
		}
	}
	return nil
}
