package engine

// Handle is a stream open on this process, as Open returns it: holding one
// is the proof that the stream is local, so its methods look nothing up.
// When the engine lets the stream go (a close, a shutdown's hand-off, a
// takeover's release), they return ErrNotLocal before any effect, and the
// caller opens the stream again.
type Handle struct {
	e *Engine
	s *stream
	// Opened: the Open that returned the handle made the stream local
	// (it was not open here before).
	Opened bool
}

// ID is the stream's id.
func (h Handle) ID() uint64 { return h.s.id }
