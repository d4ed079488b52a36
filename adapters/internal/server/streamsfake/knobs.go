package streamsfake

import (
	"slices"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// SetOwner makes Route answer addr for name, as when another node owns it.
func (f *Streams) SetOwner(name, addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.owners[name] = addr
}

// SetRouteError makes Route fail with err (nil: answer again).
func (f *Streams) SetRouteError(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routeErr = err
}

// SetFailure makes every method but Route fail with err (nil: work again).
func (f *Streams) SetFailure(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

// Reset forgets every stream and access (a fuzz target reuses one fake).
func (f *Streams) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, st := range f.streams {
		close(st.changed)
	}
	f.streams = map[string]*stream{}
	f.accesses = map[string]int{}
}

// Records returns a copy of a stream's records from its start.
func (f *Streams) Records(name string) []domain.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.streams[name]
	if !ok {
		return nil
	}
	return slices.Clone(st.records[st.start:])
}

// Info describes a stream without counting an access or failing.
func (f *Streams) Info(name string) (ports.StreamInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.streams[name]
	if !ok {
		return ports.StreamInfo{}, false
	}
	return st.info(name), true
}

// Len returns how many streams exist.
func (f *Streams) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.streams)
}

// AccessCount returns how many TTL-renewing calls name has seen.
func (f *Streams) AccessCount(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.accesses[name]
}

// Forks returns the fork requests received so far.
func (f *Streams) Forks() []ports.ForkRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.forks)
}
