package wal

import "time"

// lingerPutTimes is how many recent PUT latencies a wait may last. One is
// too short on a busy machine: sending the acknowledgements and reading the
// appends that answer them takes CPU time, so with the CPU saturated the
// appenders come back over more than a PUT's time, the wait ends with a
// third of them still out, and the cohorts split again. Measured with
// BenchmarkVersusReference (tests/dsconformance), 64 appenders: 45-52
// appends per PUT with one, 61-63 with two, and 6-16% more appends/s. Two
// cost a steady flow of independent appends about 1.3 ms more at p50 at
// 2 ms PUTs, for a third fewer PUTs (BenchmarkOpenLoopAppends).
const lingerPutTimes = 2

// linger holds the WAL's next bulk back for a moment after an upload
// completes with no other in flight, until the appenders it acknowledged
// have submitted again.
//
// Without it, appenders that each wait for their acknowledgement split into
// two cohorts: those released by one upload come back while the next is
// already in flight, so each waits for that upload and then its own, and
// every PUT carries half of them. Holding the next bulk until everyone it
// waits for is in (the submissions just acknowledged plus those already in
// the draft) merges the cohorts: one PUT carries them all, and each waits
// one PUT, not two.
//
// The wait lasts at most lingerPutTimes recent PUT latencies, capped by
// MaxLinger. A lone appender is never held: once it is back, everyone is.
// The price falls on a steady flow of independent appends (clients that do
// not wait for one acknowledgement before the next): those that arrive
// during a wait take part of it on top of their PUT, and in return share
// larger PUTs. A full draft, a closing WAL and a submitter waiting for
// buffer room are never held.
type linger struct {
	active     bool
	expect     int         // submissions in the draft that end the wait
	until      time.Time   // when the timer ends it
	timer      *time.Timer // one for the WAL's life, reset for each wait
	putLatency time.Duration
	putTimes   int // how many PUT latencies a wait may last
}

// observe folds a stored bulk's PUT time into the moving average.
func (l *linger) observe(took time.Duration) {
	if l.putLatency == 0 {
		l.putLatency = took
		return
	}
	l.putLatency += (took - l.putLatency) / 8
}

func (l *linger) stop() {
	if l.active {
		l.active = false
		l.timer.Stop()
	}
}

// lingerLocked starts a wait after an upload acknowledged acked submissions
// and left none in flight. It reports false when there is nothing to wait
// for: the caller seals the draft as before.
func (w *WAL) lingerLocked(acked int) bool {
	wait := min(time.Duration(w.linger.putTimes)*w.linger.putLatency, w.cfg.MaxLinger)
	if gap := w.pacer.spacing(&w.cfg); gap > 0 {
		wait = min(wait, gap) // on a slow store, pipelining beats waiting
	}
	if wait <= 0 || w.closing || w.open.frames >= w.cfg.MaxBulkBytes {
		return false
	}
	l := &w.linger
	l.active, l.expect, l.until = true, len(w.open.done)+acked, time.Now().Add(wait)
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, w.lingerExpired)
	} else {
		l.timer.Reset(wait)
	}
	return true
}

// lingeringLocked reports whether a wait still holds the draft back: it
// ends once everyone it waited for is in.
func (w *WAL) lingeringLocked() bool {
	if w.linger.active && len(w.open.done) >= w.linger.expect {
		w.linger.stop()
	}
	return w.linger.active
}

// lingerExpired ends the wait, if one holds and its time is up (a timer
// that fired for an earlier wait may run late, into a later one), and seals
// what came.
func (w *WAL) lingerExpired() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.linger.active || time.Now().Before(w.linger.until) {
		return
	}
	w.linger.active = false
	w.considerLocked(true)
}
