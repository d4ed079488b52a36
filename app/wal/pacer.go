package wal

import "time"

// pacer lets a draft leave while uploads are in flight, when PUTs are slow
// enough that waiting for one to complete costs more than another PUT.
//
// With one upload in flight at a time, an append that arrives during an
// upload waits for the rest of it and then its own: 1.5 PUTs on average,
// more when the appenders it acknowledged come back late and the linger
// holds the draft for them. That is right when PUTs are cheap and the CPU
// is the limit (on loopback a second bulk in flight was measured slower),
// and wrong when a PUT takes tens of milliseconds and the machine idles.
// So while uploads are in flight, the draft leaves once its first frame has
// waited the recent PUT latency divided by Config.Pipeline, and never less
// than Config.PipelineGap: on S3 Standard (about 25 ms a PUT) up to four
// bulks overlap, a frame waits at most a quarter of a PUT before its own,
// and an idle appender still goes out at once. On a store faster than the
// gap an upload completes first, so nothing changes there.
type pacer struct {
	latency time.Duration // moving average of PUT times, retries included
	timer   *time.Timer   // one for the WAL's life, reset for each due time
	due     time.Time     // when the armed timer fires (zero: not armed)
}

// observe folds a stored bulk's PUT time into the moving average.
func (p *pacer) observe(took time.Duration) {
	if p.latency == 0 {
		p.latency = took
		return
	}
	p.latency += (took - p.latency) / 8
}

// spacing is how long a draft's first frame waits while uploads are in
// flight before the draft leaves anyway (0: it waits for an upload to
// complete).
func (p *pacer) spacing(cfg *Config) time.Duration {
	if cfg.Pipeline <= 1 || p.latency == 0 {
		return 0
	}
	return max(p.latency/time.Duration(cfg.Pipeline), cfg.PipelineGap)
}

// arm makes fire run at due, unless it already runs sooner.
func (p *pacer) arm(due time.Time, fire func()) {
	if !p.due.IsZero() && !p.due.After(due) {
		return
	}
	p.due = due
	if p.timer == nil {
		p.timer = time.AfterFunc(time.Until(due), fire)
		return
	}
	p.timer.Reset(time.Until(due))
}

// considerLocked seals the draft if it may leave now, or arms the pacer for
// when it may. waited says the draft has waited its turn: an upload just
// completed and started no linger, or the pacer's timer fired.
func (w *WAL) considerLocked(waited bool) {
	if !w.canSealLocked() {
		return
	}
	gap := w.pacer.spacing(&w.cfg)
	switch {
	case w.open.frames >= w.cfg.MaxBulkBytes, w.inflight == 0 && !w.lingeringLocked():
		w.sealAllowedLocked()
	case gap == 0:
		if waited {
			w.sealAllowedLocked()
		}
	case w.inflight == 0:
		// A linger holds the draft; it ends within gap (lingerLocked).
	case !time.Now().Before(w.open.since.Add(gap)):
		w.sealAllowedLocked()
	default:
		w.pacer.arm(w.open.since.Add(gap), w.paceExpired)
	}
}

// sealAllowedLocked seals the draft, or, when MaxPutRate allows no PUT yet,
// arms the pacer for the next one it allows.
func (w *WAL) sealAllowedLocked() {
	if w.cfg.MaxPutRate > 0 && !w.closing {
		next := w.lastSeal.Add(time.Duration(float64(time.Second) / w.cfg.MaxPutRate))
		if time.Now().Before(next) {
			w.pacer.arm(next, w.paceExpired)
			return
		}
	}
	w.sealLocked()
}

// paceExpired lets the draft leave if its time has come (a timer armed for
// an earlier draft may fire early for a later one: it then re-arms).
func (w *WAL) paceExpired() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pacer.due = time.Time{}
	w.considerLocked(true)
}
