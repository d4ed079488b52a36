package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// uploadPart is one stream's durable, uncommitted records, with the stream
// state as of their end.
type uploadPart struct {
	s     *stream
	frame domain.Frame
	state domain.SectionState
	// seal records the stream's seal with the commit, when its sealing
	// append is among the records and its own record has not been made:
	// committed records are retired from the WAL with the frame that
	// says they seal.
	seal *domain.SealStreamBy
}

// reservationTTLMs bounds how long an object id stays reserved: an upload
// abandoned by a crash is marked as garbage once it expires.
const reservationTTLMs = 10 * 60 * 1000

// Upload moves every local stream's durable, uncommitted records into data
// objects of about MaxObjectBytes, one pass per object. It returns the
// number of records committed. A pass that was not full took everything
// there was: Upload then stops, though appends went on meanwhile, so that
// under steady load it writes one object per call, not a stream of small
// ones (which compaction would then have to read back and merge). A pass
// that committed nothing ends it too: the next call tries again.
func (e *Engine) Upload(ctx context.Context) (int, error) {
	total := 0
	for {
		n, more, err := e.uploadOnce(ctx)
		total += n
		if !more || err != nil {
			return total, err
		}
	}
}

// uploadOnce writes one data object: reserve an id through the log, PUT the
// object, commit it (advancing every included stream's end offset at once),
// then drop the committed records from memory down to the tail cache and
// delete the WAL bulks that are now covered. more reports that another pass
// has work to do: this one was full, or adopted an earlier commit.
func (e *Engine) uploadOnce(ctx context.Context) (n int, more bool, err error) {
	e.uploading.Lock()
	defer e.uploading.Unlock()
	parts, full := e.collect()
	if len(parts) == 0 {
		return 0, false, e.retireWAL(ctx)
	}
	n, adopted, err := e.uploadParts(ctx, parts)
	e.requeue(parts)
	return n, (full || adopted) && err == nil, err
}

// requeue marks the parts' streams for the next upload if records are left
// to upload (a failed or partial commit), and for compaction.
func (e *Engine) requeue(parts []uploadPart) {
	for _, p := range parts {
		p.s.mu.Lock()
		left := p.s.failed == nil && p.s.confirmed > p.s.committed
		p.s.mu.Unlock()
		if left {
			e.toUpload.add(p.s.id)
		}
		e.toCompact.add(p.s.id)
	}
}

// uploadParts writes parts as one data object and commits it; adopted
// reports that some parts were not committed because an earlier commit of
// theirs had applied (see stillWritable): their newer records are left.
func (e *Engine) uploadParts(ctx context.Context, parts []uploadPart) (n int, adopted bool, err error) {
	r, err := e.cfg.Plane.ProposeOne(ctx, &domain.ReserveObjects{By: e.cfg.By, Count: 1,
		TTLMs: reservationTTLMs, NowMs: e.cfg.Now().UnixMilli()})
	if err != nil || r.Code != domain.ResultOK {
		return 0, false, fmt.Errorf("engine: reserve object id: %v %v", r, err)
	}
	id := r.Value
	frames, states := make([]domain.Frame, len(parts)), make([]domain.SectionState, len(parts))
	for i, p := range parts {
		frames[i], states[i] = p.frame, p.state
	}
	obj, _ := domain.AppendDataObject(e.objectBuf[:0], frames, states)
	if err := e.putObject(ctx, domain.DataKey(id), obj); err != nil {
		return 0, false, err
	}
	e.objectBuf = obj // stored: the buffer is free for the next pass
	committed, adopted, err := e.commit(ctx, id, uint64(len(obj)), parts)
	if err != nil {
		return 0, adopted, err
	}
	return committed, adopted, e.retireWAL(ctx)
}

// collect gathers, per local stream, the records in [committed, confirmed),
// up to about MaxObjectBytes; full reports that it stopped there.
func (e *Engine) collect() (parts []uploadPart, full bool) {
	ids := e.toUpload.take()
	e.mu.Lock()
	streams := make([]*stream, 0, len(ids))
	for _, id := range ids {
		if s, ok := e.streams[id]; ok {
			streams = append(streams, s)
		}
	}
	e.mu.Unlock()
	size := 0
	for i, s := range streams {
		if size >= e.cfg.MaxObjectBytes {
			for _, rest := range streams[i:] {
				e.toUpload.add(rest.id) // the rest goes in the next pass
			}
			return parts, true
		}
		s.mu.Lock()
		if s.failed == nil && s.confirmed > s.committed {
			recs := s.records[s.committed-s.base : s.confirmed-s.base]
			p := uploadPart{s: s, frame: domain.Frame{Stream: s.id, Epoch: s.epoch, Offset: s.committed, Records: recs},
				state: s.durableState()}
			if s.sealPending && s.confirmed > s.sealFrom {
				p.seal = sealCommandLocked(e.cfg.By, s)
			}
			parts = append(parts, p)
			size += p.frame.Size()
		}
		s.mu.Unlock()
	}
	return parts, false
}

// durableState is the stream state as of confirmed, producers sorted so an
// object's bytes do not depend on map order. The caller holds s.mu.
func (s *stream) durableState() domain.SectionState {
	st := domain.SectionState{WriterSeq: s.durableWriterSeq}
	for _, ps := range s.durableProducers {
		st.Producers = append(st.Producers, ps)
	}
	sort.Slice(st.Producers, func(i, j int) bool { return st.Producers[i].ID < st.Producers[j].ID })
	return st
}

// commit commits the object with one range per part. Streams this process
// lost meanwhile are left out (their section stays unreferenced) and the
// commit is retried with the rest.
func (e *Engine) commit(ctx context.Context, id, size uint64, parts []uploadPart) (n int, adopted bool, err error) {
	for range 3 {
		spec := domain.ObjectSpec{ID: id, Size: size}
		for _, p := range parts {
			spec.Ranges = append(spec.Ranges, domain.Range{Stream: p.s.id, Epoch: p.s.epoch,
				Start: p.frame.Offset, End: p.frame.End()})
		}
		cmds := sealsOf(parts)
		cmds = append(cmds, &domain.CommitObjects{By: e.cfg.By, Objects: []domain.ObjectSpec{spec},
			NowMs: e.cfg.Now().UnixMilli()})
		rs, err := e.cfg.Plane.Propose(ctx, cmds...)
		if err != nil {
			return 0, adopted, fmt.Errorf("engine: commit object %d: %w", id, err)
		}
		if r := rs[len(rs)-1]; r.OK() {
			for _, p := range parts {
				n += len(p.frame.Records)
				p.s.commitTo(p.frame.End(), e.cfg.TailRecords, e.cfg.TailBytes)
				e.release(p.frame.Size())
			}
			e.sealsRecorded(parts, rs)
			return n, adopted, nil
		}
		var some bool
		parts, some = e.stillWritable(parts)
		adopted = adopted || some
		if len(parts) == 0 {
			return 0, adopted, nil
		}
	}
	return 0, adopted, fmt.Errorf("engine: commit object %d kept failing", id)
}

// sealsOf is the seal records the parts carry, in order, to go before
// their commit in one proposal.
func sealsOf(parts []uploadPart) []domain.Command {
	var cmds []domain.Command
	for _, p := range parts {
		if p.seal != nil {
			cmds = append(cmds, p.seal)
		}
	}
	return cmds
}

// sealsRecorded shows readers the records of the parts whose seal the
// commit recorded, rs being the proposal's results (sealsOf's first).
func (e *Engine) sealsRecorded(parts []uploadPart, rs []domain.Result) {
	for _, p := range parts {
		if p.seal == nil {
			continue
		}
		if rs[0].OK() {
			p.s.sealRecorded()
		} else {
			e.cfg.Logger.Warn("recording a seal with its records failed", "stream", p.s.id, "result", rs[0])
		}
		rs = rs[1:]
	}
}

// stillWritable keeps the parts whose commit may be retried as they are:
// streams this process still writes, whose committed end is where the part
// starts. A stream whose end is past that had an earlier commit of ours
// apply though its outcome was unknown: that end is taken as committed
// here, and the rest of its records go in the next pass.
func (e *Engine) stillWritable(parts []uploadPart) (keep []uploadPart, adopted bool) {
	v := e.cfg.Plane.View()
	for _, p := range parts {
		st, ok := v.Stream(p.s.id)
		if !ok || !v.IsOpen(st) || st.Epoch != p.s.epoch || st.Owner != e.cfg.By.Node || st.OwnerEpoch != e.cfg.By.Epoch {
			continue
		}
		switch {
		case st.End == p.frame.Offset:
			keep = append(keep, p)
		case st.End > p.frame.Offset && st.End <= p.frame.End():
			done := p.frame
			done.Records = done.Records[:st.End-p.frame.Offset]
			p.s.commitTo(st.End, e.cfg.TailRecords, e.cfg.TailBytes)
			e.release(done.Size())
			adopted = true
			if p.seal != nil && st.Sealed {
				p.s.sealRecorded() // with the commit adopted
			}
		}
	}
	return keep, adopted
}

// commitTo records that offsets below end are committed and drops records
// from memory. Uncommitted ones stay, and for hot readers so do the newest
// committed ones that fit: their bytes (Record.Size) within keepBytes, and
// with the confirmed uncommitted ones no more than keepRecords.
func (s *stream) commitTo(end uint64, keepRecords, keepBytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.committed = max(s.committed, end)
	newBase := max(s.base, s.committed)
	count, size := int(s.confirmed-newBase), 0
	for newBase > s.base && count < keepRecords {
		size += s.records[newBase-1-s.base].Size()
		if size > keepBytes {
			break
		}
		newBase--
		count++
	}
	if newBase > s.base {
		s.records = append([]domain.Record(nil), s.records[newBase-s.base:]...)
		s.base = newBase
	}
}

func (e *Engine) putObject(ctx context.Context, key string, body []byte) error {
	err := e.cfg.Store.PutIfAbsent(ctx, key, body)
	if errors.Is(err, ports.ErrPrecondition) {
		stored, gerr := e.cfg.Store.Get(ctx, key, 0, -1)
		if gerr == nil && string(stored) == string(body) {
			return nil
		}
		return fmt.Errorf("engine: data object %s already holds other bytes", key)
	}
	return err
}

// retireWAL deletes WAL bulks whose every frame is committed.
func (e *Engine) retireWAL(ctx context.Context) error {
	v := e.cfg.Plane.View()
	return e.cfg.WAL.Retire(ctx, func(stream, end uint64) bool {
		st, ok := v.Stream(stream)
		return !ok || st.SoftDeleted || st.End >= end // a soft-deleted stream is never reopened
	})
}
