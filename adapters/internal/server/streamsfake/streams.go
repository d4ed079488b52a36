// Package streamsfake is a test double: an in-memory ports.Streams for the
// listeners' tests. Its appends are judged by the service's own write rules
// (domain.WriteState), its records checked by the same ports.Unfit, and
// answered by the same outcome (ports.AppendOutcome); it keeps enough of the
// rest (trim, incarnations, wake-ups) to drive every protocol path, so a
// listener test that passes on it states what the listener does in
// production.
//
// It passes the ports.Streams conformance suite (tests/conformance) except
// for what it leaves out, which the suite does not run on it: forks (Fork
// records the request and refuses it), and idle TTLs and expiry (it has no
// settable clock; it only counts the accesses that would renew an idle
// TTL, and its timestamps count up from 2023).
package streamsfake

import (
	"sync"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// Streams is the fake service. The zero value is not ready: use New.
type Streams struct {
	mu      sync.Mutex
	streams map[string]*stream
	clock   int64
	nextID  uint64
	// owners maps a name to the address Route returns for it.
	owners map[string]string
	// routeErr, when set, is what Route returns.
	routeErr error
	// fail, when set, is returned by every method but Route.
	fail error
	// accesses counts, per name, the calls that renew an idle TTL (all
	// but Head and Route).
	accesses map[string]int
	// forks records the fork requests received (the fake creates no fork).
	forks []ports.ForkRequest
}

type stream struct {
	id      uint64
	cfg     domain.StreamConfig
	start   uint64
	records []domain.Record // records[i] has offset i; below start are dropped
	// write is what the write rules judge appends by, as the engine's.
	write   domain.WriteState
	created int64
	changed chan struct{}
}

// New returns an empty fake whose clock starts in 2023.
func New() *Streams {
	return &Streams{streams: map[string]*stream{}, owners: map[string]string{},
		accesses: map[string]int{}, clock: 1_700_000_000_000}
}

var _ ports.Streams = (*Streams)(nil)

func (st *stream) next() uint64 { return uint64(len(st.records)) }

// wake closes the current Changed channel and arms a new one.
func (st *stream) wake() {
	close(st.changed)
	st.changed = make(chan struct{})
}

func (st *stream) info(name string) ports.StreamInfo {
	return ports.StreamInfo{ID: st.id, Name: name, Config: st.cfg, Start: st.start, Next: st.next(), Closed: st.write.Sealed, CreatedMs: st.created}
}

// lookup returns the stream or the error every method reports; f.mu is held.
func (f *Streams) lookup(name string) (*stream, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	st, ok := f.streams[name]
	if !ok {
		return nil, ports.Errorf(ports.ErrStreamNotFound, "stream %s not found", name)
	}
	return st, nil
}

// access looks a stream up as a call that renews its idle TTL; f.mu is held.
func (f *Streams) access(name string) (*stream, error) {
	f.accesses[name]++
	return f.lookup(name)
}
