package subscriptions

import (
	"context"
	"time"

	"github.com/picomq/pico/ports"
)

const maxWorkerBytes = 256

// Callback is a webhook worker's report; see ports.Subscriptions.
func (s *Service) Callback(ctx context.Context, ref ports.SubscriptionRef, token string, ack ports.WakeAck) (bool, error) {
	return s.report(ctx, ref, ports.WebhookSubscription, token, ack)
}

// Ack is a pull-wake worker's report; see ports.Subscriptions.
func (s *Service) Ack(ctx context.Context, ref ports.SubscriptionRef, token string, ack ports.WakeAck) (bool, error) {
	return s.report(ctx, ref, ports.PullWakeSubscription, token, ack)
}

// report applies a worker's acknowledgements to the current wake. Without
// Done it renews the lease; with Done it ends the wake and starts the next
// one if work remains.
func (s *Service) report(ctx context.Context, ref ports.SubscriptionRef, typ ports.SubscriptionType, token string, ack ports.WakeAck) (next bool, err error) {
	if err := checkRef(ref); err != nil {
		return false, err
	}
	_, err = s.update(ctx, recordKey(ref), func(cur *record) (*record, error) {
		next = false
		if err := s.admit(cur, typ, token, ack.WakeID, ack.Generation); err != nil {
			return nil, err
		}
		s.linkNewStreams(cur, s.scannedTo(recordKey(ref), cur.CreatedMs))
		if err := s.applyAcks(ctx, cur, ack.Acks); err != nil {
			return nil, err
		}
		// A call back proves the delivery, whatever became of its answer.
		cur.Wake.Delivered, cur.Failed = true, false
		if !ack.Done {
			cur.Wake.LeaseUntilMs = s.nowMs() + cur.LeaseTTLMs
			return cur, nil
		}
		o, err := s.observe(ctx, cur)
		if err != nil {
			return nil, err
		}
		next = s.finishWake(cur, o)
		return cur, nil
	})
	if next {
		s.wakeLoop()
	}
	return next, err
}

// admit checks that a worker's call concerns a live subscription of the
// right type and its current wake.
func (s *Service) admit(r *record, typ ports.SubscriptionType, token, wakeID string, generation uint64) error {
	if err := live(r); err != nil {
		return err
	}
	if r.Type != typ {
		return invalid("subscription %s is not a %s subscription", r.ID, typ)
	}
	return checkWake(r, token, wakeID, generation, s.nowMs())
}

// Claim gives the current pull-wake to a worker; see ports.Subscriptions.
func (s *Service) Claim(ctx context.Context, ref ports.SubscriptionRef, worker string) (ports.WakeClaim, error) {
	if err := checkRef(ref); err != nil {
		return ports.WakeClaim{}, err
	}
	if worker == "" || len(worker) > maxWorkerBytes {
		return ports.WakeClaim{}, invalid("worker must be 1 to %d bytes", maxWorkerBytes)
	}
	var claim ports.WakeClaim
	_, err := s.update(ctx, recordKey(ref), func(cur *record) (*record, error) {
		if err := s.claimable(cur); err != nil {
			return nil, err
		}
		s.linkNewStreams(cur, s.scannedTo(recordKey(ref), cur.CreatedMs))
		o, err := s.observe(ctx, cur)
		if err != nil {
			return nil, err
		}
		now := s.nowMs()
		if cur.Wake == nil {
			if !o.pending() {
				return nil, subErr(ports.ErrNoPendingWork, "every linked stream is acknowledged")
			}
			startWake(cur, o, now)
		}
		w := cur.Wake
		w.Snapshot, w.Holder, w.Delivered, w.LeaseUntilMs = o.snapshot, worker, true, now+cur.LeaseTTLMs
		claim = ports.WakeClaim{WakeID: w.ID, Generation: cur.Generation, Token: issueToken(cur), Streams: o.streams,
			LeaseTTL: time.Duration(cur.LeaseTTLMs) * time.Millisecond}
		return cur, nil
	})
	return claim, err
}

// claimable checks a claim and drops a claimed wake whose lease ran out.
func (s *Service) claimable(r *record) error {
	if err := live(r); err != nil {
		return err
	}
	if r.Type != ports.PullWakeSubscription {
		return invalid("subscription %s is not a pull-wake subscription", r.ID)
	}
	w := r.Wake
	if w == nil || w.Holder == "" {
		return nil
	}
	if !w.leaseExpired(s.nowMs()) {
		return &ports.SubscriptionError{Kind: ports.ErrAlreadyClaimed, Message: "the wake is claimed by " + w.Holder,
			Holder: w.Holder, Generation: r.Generation}
	}
	r.Wake = nil
	return nil
}

// Release gives a claimed wake back; see ports.Subscriptions.
func (s *Service) Release(ctx context.Context, ref ports.SubscriptionRef, token, wakeID string, generation uint64) error {
	if err := checkRef(ref); err != nil {
		return err
	}
	next := false
	_, err := s.update(ctx, recordKey(ref), func(cur *record) (*record, error) {
		if err := s.admit(cur, ports.PullWakeSubscription, token, wakeID, generation); err != nil {
			return nil, err
		}
		s.linkNewStreams(cur, s.scannedTo(recordKey(ref), cur.CreatedMs))
		o, err := s.observe(ctx, cur)
		if err != nil {
			return nil, err
		}
		next = s.finishWake(cur, o)
		return cur, nil
	})
	if next {
		s.wakeLoop()
	}
	return err
}
