package sqllog

import (
	"errors"
	"fmt"
	"strings"
)

// target is a parsed database URL.
type target struct {
	postgres bool
	// dsn is the Postgres URL, or the SQLite file path (":memory:" for memory).
	dsn string
}

var errEmptyPath = errors.New("empty SQLite path")

// parseTarget accepts sqlite:PATH, sqlite://PATH, sqlite::memory:,
// sqlite://:memory:, postgres://… and postgresql://….
func parseTarget(url string) (target, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return target{postgres: true, dsn: url}, nil
	case strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
		if path == "" {
			return target{}, errEmptyPath
		}
		// The driver reads everything after '?' as its own options.
		if strings.Contains(path, "?") {
			return target{}, fmt.Errorf("SQLite path %q must not contain '?'", path)
		}
		return target{dsn: path}, nil
	}
	return target{}, fmt.Errorf("unsupported database URL %q: want sqlite:PATH, sqlite::memory: or postgres://…", redact(url))
}

// redact hides a password so errors can be logged.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return url
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":***@" + host
	}
	return url
}
