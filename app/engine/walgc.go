package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// maxDeadWALKeys bounds the keys one CollectDeadWALs pass looks at; it
// lists them listPage at a time.
const (
	maxDeadWALKeys = 10_000
	listPage       = 1000
)

// CollectDeadWALs deletes the bulks that gone processes left in their WALs
// once no takeover can need them: the process is superseded (its node
// re-registered or was fenced) and either no stream is still open on it or
// lists it as unrecovered, or the last RecoverDeadWALs pass found it
// drained (none of those streams has records in its WAL beyond its
// committed end, which only grows, and the fenced WAL cannot change). A
// process that crashed leaves the bulks it had not retired; without this
// they would stay forever, one set per restart.
//
// Fence objects stay: a paused process that comes back retries its put at
// the key its fencer took, and must find it taken, or it could acknowledge
// appends nobody reads. Only the maintenance lease holder should call it.
// It returns the number of bulks deleted.
func (e *Engine) CollectDeadWALs(ctx context.Context) (int, error) {
	v := e.cfg.Plane.View()
	nodes := nodesFingerprint(&v)
	e.mu.Lock()
	quiet := e.deadWALs.quiet && e.deadWALs.quietNodes == nodes
	e.mu.Unlock()
	if quiet {
		return 0, nil // nothing to collect since the last round (deadWALPasses.round)
	}
	store := e.cfg.WAL.Store()
	candidates, err := e.deadWALKeys(ctx, store, &v, nodes)
	if err != nil || len(candidates) == 0 {
		return 0, err
	}
	inUse := v.WALsInUse()
	e.mu.Lock()
	drained := e.deadWALs.drained
	e.mu.Unlock()
	var bulks []string
	for _, k := range candidates {
		if p, _, _ := domain.ParseWALKey(k); inUse[p] && !drained[p] {
			continue
		}
		head, err := store.Get(ctx, k, 0, domain.FenceProbeBytes)
		switch {
		case errors.Is(err, ports.ErrNotFound):
			continue
		case err != nil:
			return 0, fmt.Errorf("engine: read %s: %w", k, err)
		case domain.IsFence(head):
			e.mu.Lock()
			e.deadWALs.fenceKeys[k] = true
			e.mu.Unlock()
			continue
		}
		bulks = append(bulks, k)
	}
	if len(bulks) == 0 {
		return 0, nil
	}
	if err := store.Delete(ctx, bulks...); err != nil {
		return 0, fmt.Errorf("engine: delete dead WAL bulks: %w", err)
	}
	return len(bulks), nil
}

// deadWALKeys lists the WAL keys of superseded processes, but for the
// fences an earlier pass found. A pass looks at up to maxDeadWALKeys keys
// from where the last one stopped (deadWALPasses.after), wrapping around at the
// end, so keys that stay (fences, live WALs) never hide those after them.
// A round over the whole key space that finds none while the nodes stay as
// they were (fingerprint nodes) quiets the listings (deadWALPasses.round).
func (e *Engine) deadWALKeys(ctx context.Context, store ports.ObjectStore, v *domain.State, nodes uint64) ([]string, error) {
	e.mu.Lock()
	after := e.deadWALs.after
	if after == "" {
		e.deadWALs.round.nodes, e.deadWALs.round.found = nodes, false
	}
	e.mu.Unlock()
	var keys []string
	for seen := 0; seen < maxDeadWALKeys; {
		page, err := store.List(ctx, domain.WALRoot, after, listPage)
		if err != nil {
			return nil, fmt.Errorf("engine: list %s: %w", domain.WALRoot, err)
		}
		e.mu.Lock()
		for _, o := range page {
			if p, _, ok := domain.ParseWALKey(o.Key); ok && v.Superseded(p) && !e.deadWALs.fenceKeys[o.Key] {
				keys = append(keys, o.Key)
			}
		}
		e.mu.Unlock()
		if len(page) < listPage {
			after = "" // the end: the next pass starts over
			break
		}
		seen += len(page)
		after = page[len(page)-1].Key
	}
	e.mu.Lock()
	d := &e.deadWALs
	d.after = after
	d.round.found = d.round.found || len(keys) > 0
	if after == "" && !d.round.found && d.round.nodes == nodes {
		d.quiet, d.quietNodes = true, nodes
	}
	e.mu.Unlock()
	return keys, nil
}
