package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// FenceWAL ends the WAL of node process (node, epoch) and returns the frames
// of every bulk it stored before the fence, in bulk order.
//
// The fencing argument: a writer stores bulks at consecutive sequence
// numbers with PutIfAbsent and acknowledges bulk k only once bulks 1..k are
// all stored. Its live bulks form a run (it deletes the oldest bulks and
// always keeps its newest one; a failed delete may leave holes, stepped over
// below like those a delete opens mid-scan). FenceWAL reads that run and
// puts a fence object, with PutIfAbsent, at the first sequence number after
// it. Exactly one of the writer and the fencer gets that key. If the fencer
// does, the writer's upload there fails forever, so it acknowledges nothing
// from that bulk on; everything it did acknowledge lies in the run returned
// here. If the writer does, the run grows by one and the fencer tries the
// next key. Fencing twice is harmless: the second finds the first's fence.
func FenceWAL(ctx context.Context, store ports.ObjectStore, node domain.NodeID, epoch uint64,
	by domain.Proposer) ([]domain.Frame, error) {
	prefix := domain.WALPrefix(node, epoch)
	seqs, err := listSeqs(ctx, store, prefix)
	if err != nil {
		return nil, err
	}
	start := uint64(1)
	if len(seqs) > 0 {
		start = seqs[0]
	}
	for range 16 {
		frames, fencedAt, err := scanAndFence(ctx, store, node, epoch, start, by)
		if err != nil {
			return nil, err
		}
		// A fence put into a hole the writer's deletes opened mid-scan lies
		// below the writer's newest bulk and stops nothing: go again past it.
		if seqs, err = listSeqs(ctx, store, prefix); err != nil {
			return nil, err
		}
		i := sort.Search(len(seqs), func(i int) bool { return seqs[i] > fencedAt })
		if i == len(seqs) {
			return frames, nil
		}
		start = seqs[i]
	}
	return nil, fmt.Errorf("engine: fencing %s did not settle", prefix)
}

// scanAndFence reads bulks from start until the first free sequence number
// and fences it. It returns the frames read and where the fence is.
func scanAndFence(ctx context.Context, store ports.ObjectStore, node domain.NodeID, epoch, start uint64,
	by domain.Proposer) ([]domain.Frame, uint64, error) {
	var frames []domain.Frame
	for next := start; ; {
		key := domain.WALKey(node, epoch, next)
		body, err := store.Get(ctx, key, 0, -1)
		if errors.Is(err, ports.ErrNotFound) {
			err = store.PutIfAbsent(ctx, key, domain.EncodeFence(by))
			if err == nil {
				return frames, next, nil
			}
			if !errors.Is(err, ports.ErrPrecondition) {
				return nil, 0, fmt.Errorf("engine: fence %s: %w", key, err)
			}
			continue // the writer (or another fencer) got there first: read it
		}
		if err != nil {
			return nil, 0, fmt.Errorf("engine: read %s: %w", key, err)
		}
		if domain.IsFence(body) {
			return frames, next, nil
		}
		h, fs, err := domain.DecodeBulk(body)
		if err != nil || h.Node != node || h.Epoch != epoch || h.Seq != next {
			return nil, 0, fmt.Errorf("engine: WAL object %s is damaged (header %+v): %v", key, h, err)
		}
		frames = append(frames, fs...)
		next++
	}
}

const listPage = 1000

// listSeqs lists the sequence numbers stored under prefix, ascending.
func listSeqs(ctx context.Context, store ports.ObjectStore, prefix string) ([]uint64, error) {
	var seqs []uint64
	after := ""
	for {
		page, err := store.List(ctx, prefix, after, listPage)
		if err != nil {
			return nil, fmt.Errorf("engine: list %s: %w", prefix, err)
		}
		if len(page) == 0 {
			return seqs, nil
		}
		for _, o := range page {
			if seq, ok := domain.ParseWALSeq(prefix, o.Key); ok {
				seqs = append(seqs, seq)
			}
		}
		if len(page) < listPage {
			return seqs, nil // a short page is the last one
		}
		after = page[len(page)-1].Key
	}
}
