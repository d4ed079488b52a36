package wal

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/picomq/pico/app/broken"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Fence ends the WAL of node process (node, epoch) and returns the frames
// of every bulk it stored before the fence, in bulk order.
//
// The fencing argument: a writer stores bulks at consecutive sequence
// numbers with PutIfAbsent and acknowledges bulk k only once bulks 1..k are
// all stored. It deletes only bulks it has acknowledged and always keeps
// its newest one. Fence reads its bulks from sequence 1 up to the first
// free sequence number and puts a fence object there, with PutIfAbsent
// (for a writer that retired its first bulks, that fence covers a retired
// key, and the scan goes on from the oldest listed bulk, as past a hole).
// Exactly one of the writer and the fencer gets that key. If the writer
// does, the fencer reads it and tries the next key. If the fencer does and
// the key lies past the writer's newest bulk, the writer's upload there
// fails forever, so it acknowledges nothing from that bulk on,
// and everything it did acknowledge has been read. A free key below the
// writer's newest bulk is a hole: a bulk still in flight (then the fence
// stops the writer there: nothing from it on was acknowledged) or one a
// retire deleted (then it was committed and is not needed). Fence
// fences the hole too and goes on past it, keeping every frame read, until
// a fence lies past every stored bulk. Each round fences a higher key and
// holes are finite, so it ends. Fencing twice is harmless: the second
// fencer stops at the first's fences as at holes.
func Fence(ctx context.Context, store ports.ObjectStore, node domain.NodeID, epoch uint64,
	by domain.Proposer) ([]domain.Frame, error) {
	prefix := domain.WALPrefix(node, epoch)
	// The scan starts at sequence 1, not at the oldest listed bulk. Before a
	// writer acknowledged anything, every free key below its oldest stored
	// bulk may be in flight (with pipelined uploads, bulk 2 can land before
	// bulk 1): a fence at 1 stops it acknowledging at all. Once it has
	// acknowledged, its newest acknowledged bulk is listed, everything below
	// that is acknowledged, and the fence at 1 merely covers a retired key.
	start := uint64(1)
	var all []domain.Frame
	for range maxFenceRounds {
		frames, fencedAt, err := scanAndFence(ctx, store, node, epoch, start, by)
		if err != nil {
			return nil, err
		}
		all = append(all, frames...)
		seqs, err := listSeqs(ctx, store, prefix)
		if err != nil {
			return nil, err
		}
		i := sort.Search(len(seqs), func(i int) bool { return seqs[i] > fencedAt })
		if i == len(seqs) {
			return all, nil
		}
		start = seqs[i]
	}
	return nil, fmt.Errorf("wal: fencing %s did not settle after %d rounds", prefix, maxFenceRounds)
}

// maxFenceRounds bounds Fence against a store whose listing never
// settles; a writer leaves far fewer holes.
const maxFenceRounds = 1 << 16

// scanAndFence reads bulks from start until the first free sequence number
// and fences it. It returns the frames read and where the fence is.
func scanAndFence(ctx context.Context, store ports.ObjectStore, node domain.NodeID, epoch, start uint64,
	by domain.Proposer) ([]domain.Frame, uint64, error) {
	var frames []domain.Frame
	for next := start; ; {
		key := domain.WALKey(node, epoch, next)
		body, err := store.Get(ctx, key, 0, -1)
		if errors.Is(err, ports.ErrNotFound) {
			if broken.SkipFence() {
				return frames, next, nil
			}
			err = store.PutIfAbsent(ctx, key, domain.EncodeFence(by))
			if err == nil {
				return frames, next, nil
			}
			if !errors.Is(err, ports.ErrPrecondition) {
				return nil, 0, fmt.Errorf("wal: fence %s: %w", key, err)
			}
			continue // the writer (or another fencer) got there first: read it
		}
		if err != nil {
			return nil, 0, fmt.Errorf("wal: read %s: %w", key, err)
		}
		if domain.IsFence(body) {
			return frames, next, nil
		}
		h, fs, err := domain.DecodeBulk(body)
		if err != nil || h.Node != node || h.Epoch != epoch || h.Seq != next {
			return nil, 0, fmt.Errorf("wal: object %s is damaged (header %+v): %v", key, h, err)
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
			return nil, fmt.Errorf("wal: list %s: %w", prefix, err)
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
