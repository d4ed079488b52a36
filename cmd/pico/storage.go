package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/picomq/pico/adapters/filestore"
	"github.com/picomq/pico/adapters/s3store"
	"github.com/picomq/pico/app/wal"
	"github.com/picomq/pico/ports"
)

// openStorage opens an object store from a --storage or --wal value:
// [ID@]file://DIR or [ID@]s3://BUCKET?region=…&endpoint=…&pathStyle=true.
// The optional ID names the store in the original's notation; it is
// accepted and not used.
func openStorage(ctx context.Context, value string) (ports.ObjectStore, error) {
	_, raw := splitStorageID(value)
	switch {
	case strings.HasPrefix(raw, "file://"):
		return filestore.Open(raw)
	case strings.HasPrefix(raw, "s3://"):
		return s3store.Open(ctx, raw)
	}
	return nil, fmt.Errorf("storage %q: want file://DIR or s3://BUCKET?…", value)
}

func splitStorageID(value string) (id, raw string) {
	if i := strings.Index(value, "@"); i >= 0 && !strings.Contains(value[:i], "://") {
		return value[:i], value[i+1:]
	}
	return "", value
}

// walParams takes the WAL tuning parameters (bulkBytes, inflight, pipeline, linger) out of a
// --wal URI and returns the URI without them.
func walParams(value string, cfg *wal.Config) (string, error) {
	id, raw := splitStorageID(value)
	base, query, found := strings.Cut(raw, "?")
	if !found {
		return value, nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("--wal: %w", err)
	}
	for name, field := range map[string]*int{"bulkBytes": &cfg.MaxBulkBytes, "inflight": &cfg.MaxInFlight, "pipeline": &cfg.Pipeline} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return "", fmt.Errorf("--wal: %s=%q is not a positive number", name, v)
			}
			*field = n
			q.Del(name)
		}
	}
	if v := q.Get("linger"); v != "" {
		d, err := time.ParseDuration(v) // "0" parses too
		if err != nil || d < 0 {
			return "", fmt.Errorf("--wal: linger=%q is not a duration such as 5ms (0 turns it off)", v)
		}
		cfg.MaxLinger = d
		if d == 0 {
			cfg.MaxLinger = -1 // the config's zero is the default
		}
		q.Del("linger")
	}
	out := base
	if len(q) > 0 {
		out += "?" + q.Encode()
	}
	if id != "" {
		out = id + "@" + out
	}
	return out, nil
}
