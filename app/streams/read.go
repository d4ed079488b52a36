package streams

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/picomq/pico/app/engine"
	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// maxReadRecords bounds one page when the caller sets no count.
const maxReadRecords = 1 << 16

// Read returns durable records; see ports.Streams.
func (s *Service) Read(ctx context.Context, name string, from uint64, lim ports.ReadLimits) (ports.ReadResult, error) {
	return s.read(ctx, name, from, lim, false)
}

// ReadTail reads at the tail; see ports.Streams.
func (s *Service) ReadTail(ctx context.Context, name string) (ports.ReadResult, error) {
	return s.read(ctx, name, 0, ports.ReadLimits{Count: 1}, true)
}

// read reads from offset from, or with atTail at the tail as found.
func (s *Service) read(ctx context.Context, name string, from uint64, lim ports.ReadLimits, atTail bool) (ports.ReadResult, error) {
	var res ports.ReadResult
	err := s.named(ctx, name, s.touch, func(st stream) (err error) {
		res, err = s.readStream(ctx, st, from, lim, atTail)
		return err
	})
	return res, err
}

func (s *Service) readStream(ctx context.Context, st stream, from uint64, lim ports.ReadLimits, atTail bool) (ports.ReadResult, error) {
	count := maxReadRecords
	if lim.Count > 0 {
		count = min(lim.Count, maxReadRecords)
	}
	var page engine.ReadResult
	var recs []domain.Record
	err := s.openAnd(ctx, st, func(h engine.Handle) (err error) {
		at := from
		if atTail {
			if at, err = h.Tail(); err != nil {
				return err
			}
		}
		if page, err = h.Read(ctx, at, count); err != nil {
			return err
		}
		if atTail {
			// At the tail this read found: Confirmed and Changed go
			// together, so a waiter on Changed misses nothing appended
			// since.
			page.From, page.Records = page.Confirmed, nil
		}
		if page.From > page.Confirmed {
			return ports.Errorf(ports.ErrBadRequest, "seq %d is beyond the tail %d", at, page.Confirmed)
		}
		recs, err = s.fill(ctx, h, page, count, lim.Bytes)
		return err
	})
	if err == nil {
		err = s.serving() // the tail it found is the truth only if so
	}
	if err != nil {
		return ports.ReadResult{}, err
	}
	next := page.From + uint64(len(recs))
	res := ports.ReadResult{Records: recs, From: page.From, Next: next, Tail: page.Confirmed,
		UpToDate: next >= page.Confirmed, Config: st.cfg, ID: st.ID, Changed: page.Changed}
	// The closure is the engine's, read with the records: the view's seal
	// lags the wake-up of readers, and the engine holds a closing
	// append's records back until the seal is recorded.
	res.Closed = res.UpToDate && page.Closed
	return res, nil
}

// fillReads bounds the engine reads one page is assembled from.
const fillReads = 16

// fill tops a page up to the limits: one engine read stops at the end of a
// data object, and a reader should not have to ask again just for that.
// page.Confirmed keeps the tail the page first saw. Each read is cut to
// the bytes left before it joins the page, so a page costs what it holds,
// not the rest of the section it came from.
func (s *Service) fill(ctx context.Context, h engine.Handle, page engine.ReadResult, count, maxBytes int) ([]domain.Record, error) {
	room := maxBytes
	if room <= 0 {
		room = math.MaxInt
	}
	n, size := fitBytes(page.Records, room, true)
	recs, full := page.Records[:n], n < len(page.Records)
	for range fillReads {
		next := page.From + uint64(len(recs))
		if full || len(recs) == 0 || len(recs) >= count || next >= page.Confirmed || size >= room {
			break
		}
		more, err := h.Read(ctx, next, count-len(recs))
		if err != nil {
			return nil, err
		}
		if more.From != next || len(more.Records) == 0 {
			break // trimmed meanwhile: stop at the gap
		}
		n, grown := fitBytes(more.Records, room-size, false)
		full = n < len(more.Records)
		// Clipped: recs may be a cached section's records, never written.
		recs, size = append(slices.Clip(recs), more.Records[:n]...), size+grown
	}
	return recs, nil
}

// Head returns a stream's info with live offsets; see ports.Streams.
func (s *Service) Head(ctx context.Context, name string) (ports.StreamInfo, error) {
	var info ports.StreamInfo
	err := s.named(ctx, name, s.lookup, func(st stream) (err error) {
		info, err = s.head(ctx, st)
		return err
	})
	return info, err
}

// head opens the stream here (so its tail is exact: a previous owner may
// have left records in its WAL) and reports it.
func (s *Service) head(ctx context.Context, st stream) (ports.StreamInfo, error) {
	var tail uint64
	var closed bool
	err := s.openAnd(ctx, st, func(h engine.Handle) (err error) {
		tail, closed, err = h.End()
		return err
	})
	if err == nil {
		err = s.serving()
	}
	if err != nil {
		return ports.StreamInfo{}, err
	}
	info := s.info(st)
	info.Next, info.Closed = tail, closed // as a read at the tail finds them
	return info, nil
}

func (s *Service) info(st stream) ports.StreamInfo {
	return ports.StreamInfo{ID: st.ID, Name: st.Name, Config: st.cfg, Start: s.cfg.Engine.ReadStart(st.ID), Next: st.End,
		Closed: st.Sealed, CreatedMs: st.CreatedMs}
}

// List returns streams by name; see ports.Streams. Offsets are the
// committed ones except for streams open here (the listing opens nothing).
func (s *Service) List(ctx context.Context, prefix, startAfter string, limit int) (ports.ListPage, error) {
	if limit <= 0 {
		limit = 1000
	}
	v := s.cfg.Plane.View()
	from := max(prefix, startAfter)
	var page ports.ListPage
	v.StreamsFrom(from, func(st0 *domain.Stream) bool {
		switch {
		case !strings.HasPrefix(st0.Name, prefix):
			return false
		case st0.Name == startAfter:
			return true
		case len(page.Streams) == limit:
			page.HasMore = true
			return false
		}
		st, err := s.live(st0)
		if err != nil {
			return true // expired, deleted or undecodable: not listed
		}
		info := s.info(st)
		if tail, err := s.cfg.Engine.Tail(st.ID); err == nil {
			info.Next = tail
		}
		page.Streams = append(page.Streams, info)
		return true
	})
	return page, ctx.Err()
}

// fitBytes counts the records, from the first, whose bodies fit in room
// bytes, and their size; with first, the first record counts even when it
// alone is larger.
func fitBytes(recs []domain.Record, room int, first bool) (n, size int) {
	for _, r := range recs {
		if size+len(r.Body) > room && (n > 0 || !first) {
			break
		}
		size += len(r.Body)
		n++
	}
	return n, size
}

func (s *Service) sealed(id uint64) bool {
	v := s.cfg.Plane.View()
	st, ok := v.Stream(id)
	return ok && st.Sealed
}
