package engine

import (
	"sync"
	"sync/atomic"

	"github.com/picomq/pico/app/broken"
	"github.com/picomq/pico/domain"
)

// stream is the engine's state for one stream this process writes.
//
// Two locks: gate orders appends (offsets, timestamps and producer checks
// are decided under it, and frames enter the WAL in that order); mu guards
// what readers see. A reader never takes gate, so a slow reader cannot stall
// appends, and an append waits for durability outside both.
type stream struct {
	id    uint64
	epoch uint64 // the stream epoch this process opened it at

	gate sync.Mutex
	// write is what the write rules judge appends by (the next offset,
	// seal and its closer, producers, writer sequence): under gate.
	write domain.WriteState
	// sealClosed: a close recorded the seal with the stream's close, before
	// the sealing append could (sealUnrecorded); set under gate.
	sealClosed bool

	mu        sync.Mutex
	base      uint64          // offset of records[0]
	records   []domain.Record // the tail in memory, [base, next)
	confirmed uint64          // records below are durable: the confirm offset
	committed uint64          // records below are in committed data objects
	changed   chan struct{}   // see changedLocked
	failed    error
	// ending, while this process proposes to close or delete the stream,
	// is closed once the outcome is known. Meanwhile the stream may
	// already be gone, or another process's, as others see the log, so
	// readers wait rather than answer from it (see ending.go).
	ending chan struct{}
	// durableProducers is the producer state as of confirmed: what a data
	// object written now must carry.
	durableProducers map[string]domain.ProducerState
	// durableWriterSeq is the writer sequence as of confirmed, likewise.
	durableWriterSeq string
	// sealFrom, while sealPending, is the first offset of the append that
	// sealed the stream, whose seal is not recorded yet: readers see no
	// record from there on until it is (readableLocked), so that the
	// closing append's records reach them together with the closure.
	sealFrom    uint64
	sealPending bool
	// sealCloser is the producer stamp of the request that sealed the
	// stream here, nil for one without: what its seal's record names. It
	// is write.Closer's stamp under mu, for the upload (collect), which
	// does not take the gate.
	sealCloser *domain.ProducerStamp
	// closed: the stream's seal is recorded in the metadata. Readers are
	// told so with the records, at the same moment: a page that reaches
	// the readable tail of a closed stream reaches its end.
	closed bool

	// used: an open found the stream local since the idle queue last
	// looked at it (see releaseIdle).
	used atomic.Bool
}

func newStream(id, epoch, start uint64) *stream {
	// The producer maps stay nil until a producer writes: most streams
	// never see one, and an idle stream should hold little.
	return &stream{id: id, epoch: epoch, base: start, confirmed: start, committed: start,
		write: domain.WriteState{Next: start}}
}

// setProducer records p in the write state and, durable, as of confirmed.
func (s *stream) setProducer(p domain.ProducerState, durable bool) {
	if !durable {
		if s.write.Producers == nil {
			s.write.Producers = map[string]domain.ProducerState{}
		}
		s.write.Producers[p.ID] = p
		return
	}
	if s.durableProducers == nil {
		s.durableProducers = map[string]domain.ProducerState{}
	}
	s.durableProducers[p.ID] = p
}

// loadSection installs the producer state and writer sequence read from
// the section of the stream's last data object.
func (s *stream) loadSection(sec domain.Section) {
	for _, p := range sec.Producers {
		s.setProducer(p, false)
		s.setProducer(p, true)
	}
	s.write.WriterSeq, s.durableWriterSeq = sec.WriterSeq, sec.WriterSeq
}

// hasDurableState reports whether the stream has producer state or a writer
// sequence that a takeover restores from its last data object's section:
// then a trim of every record keeps that object (TrimStream.KeepLast).
func (s *stream) hasDurableState() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.durableProducers) > 0 || s.durableWriterSeq != ""
}

// load installs recovered frames (offsets from the next one on) as durable and
// returns them as installed: cut to start where the stream stood.
func (s *stream) load(frames []domain.Frame) []domain.Frame {
	var installed []domain.Frame
	for i := range frames {
		f := &frames[i]
		if f.Offset > s.write.Next || f.End() <= s.write.Next {
			continue // already covered, or beyond a hole (never acknowledged)
		}
		recs := f.Records[s.write.Next-f.Offset:]
		part := *f
		part.Offset, part.Records = s.write.Next, recs
		installed = append(installed, part)
		s.records = append(s.records, recs...)
		s.write.Next += uint64(len(recs))
		if n := len(recs); n > 0 {
			s.write.LastTs = max(s.write.LastTs, recs[n-1].TimestampMs)
		}
		if p := f.Producer; p != nil {
			ps := domain.ProducerState{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq, First: f.Offset, Next: f.End()}
			s.setProducer(ps, false)
			s.setProducer(ps, true)
		}
		if f.WriterSeq != "" {
			s.write.WriterSeq, s.durableWriterSeq = f.WriterSeq, f.WriterSeq
		}
		if f.Seals && !s.write.Sealed {
			s.sealCloser = f.Producer.Clone()
			s.write.Sealed, s.write.Closer = true, domain.Closer{Known: true, Producer: s.sealCloser}
		}
	}
	s.confirmed = s.write.Next
	return installed
}

// durable is the WAL callback for a frame ending at end: it raises the
// confirm offset and wakes readers. Frames of one stream are acknowledged in
// offset order, so end only grows.
func (s *stream) durable(f *domain.Frame, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.failed == nil {
			s.failed = err
		}
	} else if end := f.End(); end > s.confirmed {
		s.confirmed = end
		if p := f.Producer; p != nil {
			s.setProducer(domain.ProducerState{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq, First: f.Offset, Next: end}, true)
		}
		if f.WriterSeq != "" {
			s.durableWriterSeq = f.WriterSeq
		}
	}
	s.notifyLocked()
}

// durable is s.durable, and marks s for the next upload once records are
// durable.
func (e *Engine) durable(s *stream, f *domain.Frame, err error) {
	s.durable(f, err)
	if err == nil {
		e.toUpload.add(s.id)
	}
}

// wake tells waiting readers that something other than the confirm offset
// changed (a seal, a delete).
func (s *stream) wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notifyLocked()
}

// changedLocked returns a channel closed at the stream's next change (the
// confirm offset grows, a seal, a delete). It is made only when someone
// asks: appends with no reader waiting make and close none.
func (s *stream) changedLocked() <-chan struct{} {
	if s.failed != nil {
		return closedChan // nothing changes any more: look again, and find it let go
	}
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// notifyLocked wakes whoever waits on changedLocked's channel.
func (s *stream) notifyLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// readableLocked is the tail readers see: the confirm offset, short of
// the records of an append that sealed the stream while its seal is not
// recorded.
func (s *stream) readableLocked() uint64 {
	if s.sealPending {
		return min(s.confirmed, s.sealFrom)
	}
	return s.confirmed
}

// holdForSealLocked hides the records from offset from on (those of the
// append sealing the stream, made by closer) from readers until the seal
// is recorded (sealRecorded). The caller holds mu.
func (s *stream) holdForSealLocked(from uint64, closer *domain.ProducerStamp) {
	s.sealFrom, s.sealPending, s.sealCloser = from, true, closer
}

// sealRecorded is called once the seal is in the metadata: readers now see
// the closing append's records and the closure together.
func (s *stream) sealRecorded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sealPending, s.closed = false, true
	s.notifyLocked()
}

// sealAwaitsRecord reports whether the stream is sealed here and its seal
// is not recorded yet.
func (s *stream) sealAwaitsRecord() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sealPending
}

// tailView is what a reader sees of the stream at one moment: the
// readable tail, whether the stream is closed there, and a channel closed
// at its next change.
type tailView struct {
	tail    uint64
	closed  bool
	changed <-chan struct{}
}

func (s *stream) tailViewLocked() tailView {
	return tailView{tail: s.readableLocked(), closed: s.closed, changed: s.changedLocked()}
}

// read returns up to max readable records from offset from out of the
// tail in memory, with the view they were read at; ok is false if from is
// below base (those records are in data objects: the caller reads them
// there).
func (s *stream) read(from uint64, max int) (recs []domain.Record, at tailView, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at = s.tailViewLocked()
	if from < s.base {
		return nil, at, false
	}
	visible := at.tail
	if broken.StaleRead() {
		visible = s.base + uint64(len(s.records))
	}
	end := min(visible, from+uint64(max))
	if from < end {
		recs = make([]domain.Record, end-from)
		copy(recs, s.records[from-s.base:end-s.base])
	}
	return recs, at, true
}

func (s *stream) committedThrough() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.committed
}
