package httpguard

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// CatchUpLimits configure a CatchUp.
type CatchUpLimits struct {
	// Share is the part of the node's CPUs that catch-up pages may hold
	// while appends run (default 0.45). Below one CPU, one page at a time
	// is served for that part of the time. 1 gives appends no priority.
	Share float64
	// BytesPerSecond bounds the catch-up bytes served per second, appends
	// or not; 0 for no bound.
	BytesPerSecond int64
	// CPUs is the node's CPUs (default GOMAXPROCS).
	CPUs int
}

// Defaults of CatchUpLimits and of the turns.
const (
	DefaultCatchUpShare = 0.45
	// foregroundLinger keeps appends counted as running for a while after
	// the last one ends: a closed-loop client sends its next append only
	// after its acknowledgement.
	foregroundLinger = 50 * time.Millisecond
	// maxTurn is the longest a turn counts: a page whose write takes
	// longer waits on its client's network, not on the CPU, and gives its
	// turn back so that a stalled client cannot hold catch-up reads up.
	maxTurn = 20 * time.Millisecond
	// catchUpBurst is the byte rate's bucket: the largest page.
	catchUpBurst = 8 << 20
)

// CatchUp schedules catch-up pages (those that do not reach their stream's
// tail) behind appends, for both protocols: while appends run, at most
// Share of the CPUs serve catch-up pages at once, and the rest wait their
// turn in arrival order; with no append running they take every CPU, so
// readers use what appends leave idle. Appends and pages that reach the
// tail (live delivery) never wait.
type CatchUp struct {
	busy, idle int           // turns at once, with appends running and without
	duty       float64       // the part of the time one turn runs with appends running, when below 1
	bytes      *rate.Limiter // nil: no bound

	appends  atomic.Int64 // in flight
	lastDone atomic.Int64 // when the last one ended, in Unix nanoseconds

	mu      sync.Mutex
	turns   int
	waiting []chan struct{}

	served, waited atomic.Int64
}

// NewCatchUp returns a scheduler with limits l.
func NewCatchUp(l CatchUpLimits) *CatchUp {
	if l.CPUs <= 0 {
		l.CPUs = runtime.GOMAXPROCS(0)
	}
	if l.Share <= 0 {
		l.Share = DefaultCatchUpShare
	}
	cpus := min(1, l.Share) * float64(l.CPUs)
	c := &CatchUp{idle: l.CPUs, busy: max(1, int(cpus)), duty: min(1, cpus)}
	if l.BytesPerSecond > 0 {
		c.bytes = rate.NewLimiter(rate.Limit(l.BytesPerSecond), max(catchUpBurst, int(l.BytesPerSecond)))
	}
	return c
}

// Foreground counts an append as running until done is called.
func (c *CatchUp) Foreground() (done func()) {
	c.appends.Add(1)
	return c.foregroundDone
}

func (c *CatchUp) foregroundDone() {
	c.lastDone.Store(time.Now().UnixNano())
	c.appends.Add(-1)
}

// Turn waits for a turn to serve a catch-up page of n bytes and returns
// its release, which may be called more than once; or ctx's error.
func (c *CatchUp) Turn(ctx context.Context, n int) (release func(), err error) {
	if c.bytes != nil {
		if err := c.bytes.WaitN(ctx, min(n, c.bytes.Burst())); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	if len(c.waiting) == 0 && c.turns < c.limit() {
		c.turns++
		c.mu.Unlock()
		return c.held(), nil
	}
	ch := make(chan struct{})
	c.waiting = append(c.waiting, ch)
	c.mu.Unlock()
	c.waited.Add(1)
	select {
	case <-ch:
		return c.held(), nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, w := range c.waiting {
			if w == ch {
				c.waiting = append(c.waiting[:i], c.waiting[i+1:]...)
				return nil, ctx.Err()
			}
		}
		c.releaseLocked() // granted as ctx ended: pass it on
		return nil, ctx.Err()
	}
}

// held is the release of a turn just taken; it releases by itself after
// maxTurn. Below one CPU's share, a turn rests before it ends, for as long
// as the duty cycle asks (the client waits for its page's last bytes).
func (c *CatchUp) held() func() {
	c.served.Add(1)
	var once sync.Once
	start := time.Now()
	release := func() {
		once.Do(func() {
			if rest := c.rest(time.Since(start)); rest > 0 {
				time.Sleep(rest)
			}
			c.mu.Lock()
			c.releaseLocked()
			c.mu.Unlock()
		})
	}
	t := time.AfterFunc(maxTurn, release)
	return func() { t.Stop(); release() }
}

// releaseLocked ends a turn and hands turns to waiters while the limit
// allows.
func (c *CatchUp) releaseLocked() {
	c.turns--
	for len(c.waiting) > 0 && c.turns < c.limit() {
		close(c.waiting[0])
		c.waiting = c.waiting[1:]
		c.turns++
	}
}

// rest is how long a turn that ran for ran rests before it ends: nothing
// at a share of a CPU or more, or with no append running.
func (c *CatchUp) rest(ran time.Duration) time.Duration {
	if c.duty >= 1 || c.limit() != c.busy {
		return 0
	}
	return min(maxTurn, time.Duration(float64(ran)*(1/c.duty-1)))
}

// limit is the turns allowed now: fewer while appends run or ran lately.
func (c *CatchUp) limit() int {
	if c.appends.Load() > 0 || time.Now().UnixNano()-c.lastDone.Load() < int64(foregroundLinger) {
		return c.busy
	}
	return c.idle
}

// CatchUpStats are a CatchUp's counters.
type CatchUpStats struct {
	Served, Waited int64 // turns given, and those that had to wait
	Turns          int   // held now
}

// Stats returns the counters.
func (c *CatchUp) Stats() CatchUpStats {
	c.mu.Lock()
	turns := c.turns
	c.mu.Unlock()
	return CatchUpStats{Served: c.served.Load(), Waited: c.waited.Load(), Turns: turns}
}
