package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/picomq/pico/domain"
)

// Compaction merges a stream's run of small data objects into one, so cold
// reads of a long-lived stream cost few GETs.
const (
	compactMinObjects  = 8       // start when a stream has this many small objects
	compactSmallBytes  = 1 << 20 // an object below this size is small
	compactTargetBytes = 8 << 20 // stop adding objects once the run reaches this
)

// Compact merges the oldest run of small objects of stream id (which this
// process must write) into one object, committed with CompactObjects. The
// replaced objects lose their range of this stream; an object left without
// ranges becomes garbage. It returns how many objects were replaced.
func (e *Engine) Compact(ctx context.Context, id uint64) (int, error) {
	s, ok := e.local(id)
	if !ok {
		return 0, ErrNotLocal
	}
	v := e.cfg.Plane.View()
	st, ok := v.Stream(id)
	if !ok {
		return 0, ErrNotFound
	}
	run := smallRun(&v, st)
	if len(run) < compactMinObjects {
		return 0, nil
	}
	merged := domain.Frame{Stream: id, Epoch: s.epoch}
	var last domain.Section
	for i, obj := range run {
		f, sec, err := e.readSection(ctx, obj.ID, id)
		if err != nil {
			return 0, err
		}
		if i == 0 {
			merged.Offset = f.Offset
		}
		merged.Records = append(merged.Records, f.Records...)
		last = sec
	}
	r, err := e.cfg.Plane.ProposeOne(ctx, &domain.ReserveObjects{By: e.cfg.By, Count: 1,
		TTLMs: reservationTTLMs, NowMs: e.cfg.Now().UnixMilli()})
	if err != nil || r.Code != domain.ResultOK {
		return 0, fmt.Errorf("engine: reserve object id: %v %v", r, err)
	}
	// The merged section ends where the run's last one did: its state holds.
	obj, _ := domain.EncodeDataObject([]domain.Frame{merged},
		[]domain.SectionState{{Producers: last.Producers, WriterSeq: last.WriterSeq}})
	if err := e.putObject(ctx, domain.DataKey(r.Value), obj); err != nil {
		return 0, err
	}
	replaced := make([]uint64, len(run))
	for i, o := range run {
		replaced[i] = o.ID
	}
	res, err := e.cfg.Plane.ProposeOne(ctx, &domain.CompactObjects{By: e.cfg.By, Replaces: replaced,
		NowMs: e.cfg.Now().UnixMilli(), Object: domain.ObjectSpec{ID: r.Value, Size: uint64(len(obj)),
			Ranges: []domain.Range{{Stream: id, Epoch: s.epoch, Start: merged.Offset, End: merged.End()}}}})
	if err != nil || !res.OK() {
		return 0, fmt.Errorf("engine: compact stream %d: %v %v", id, res, err)
	}
	return len(run), nil
}

// smallRun returns the stream's first run of consecutive small objects,
// capped at compactTargetBytes.
func smallRun(v *domain.State, st *domain.Stream) []*domain.Object {
	var run []*domain.Object
	size := uint64(0)
	for off := st.Start; off < st.End; {
		obj, ok := v.ObjectAt(st, off)
		if !ok {
			break
		}
		end := obj.RangeOf(st.ID).End
		if obj.Size >= compactSmallBytes || size+obj.Size > compactTargetBytes {
			if len(run) >= compactMinObjects {
				return run
			}
			run, size = nil, 0
		} else {
			run = append(run, obj)
			size += obj.Size
		}
		off = end
	}
	return run
}

// compactAll compacts the local streams whose objects changed since they
// were last found with too few small objects to merge.
func (e *Engine) compactAll(ctx context.Context) {
	for _, id := range e.toCompact.take() {
		n, err := e.Compact(ctx, id)
		switch {
		case errors.Is(err, ErrNotLocal), errors.Is(err, ErrNotFound):
		case err != nil && ctx.Err() == nil:
			e.cfg.Logger.Warn("compaction failed", "stream", id, "err", err)
			e.toCompact.add(id)
		case err != nil || n > 0: // stopped, or another run may follow
			e.toCompact.add(id)
		}
	}
}
