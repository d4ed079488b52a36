package subscriptions

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

const (
	firstRetry = time.Second
	lastRetry  = time.Minute
)

type actionKind int

const (
	actNone actionKind = iota
	actWebhook
	actAnnounce
)

// action is a delivery attempt recorded in the state, to perform once the
// record is written: the write is what makes the attempt this node's.
type action struct {
	kind   actionKind
	wakeID string
	target string // the webhook URL, or the wake stream's name
	body   []byte
	header string // Webhook-Signature
}

// retryDelay is the wait before attempt n+1: doubling from 1 s up to a
// minute, with ±20 % jitter so failing subscriptions do not retry in step.
func retryDelay(attempts int) time.Duration {
	d := lastRetry
	if attempts < 8 {
		d = min(firstRetry<<(attempts-1), lastRetry)
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// attempt takes the wake's next delivery attempt: the retry schedule is
// advanced (and persisted with it) before anything is sent.
func (s *Service) attempt(ctx context.Context, r *record, fresh *observation, act *action) error {
	w, now := r.Wake, s.cfg.Now()
	w.Attempts++
	w.NextAttemptMs = now.UnixMilli() + retryDelay(w.Attempts).Milliseconds()
	if r.Type == ports.PullWakeSubscription {
		*act = action{kind: actAnnounce, wakeID: w.ID, target: r.Root + r.WakeStream, body: wakeRecord(r, now)}
		return nil
	}
	if fresh == nil { // tails move on while a delivery is retried
		o, err := s.observe(ctx, r)
		if err != nil {
			return err
		}
		fresh = &o
	}
	key, err := s.activeKey(ctx)
	if err != nil {
		return err
	}
	w.Snapshot = fresh.snapshot
	body := s.webhookBody(r, fresh.streams, issueToken(r))
	*act = action{kind: actWebhook, wakeID: w.ID, target: r.WebhookURL, body: body, header: key.signature(body, now)}
	return nil
}

// perform carries an attempt out: a wake record is appended at once, a
// webhook is posted in the background.
func (s *Service) perform(ctx context.Context, key string, act action) {
	if act.kind == actAnnounce {
		_, err := s.cfg.Streams.Append(ctx, act.target, ports.AppendRequest{Records: []domain.Record{{Body: act.body}}})
		s.afterAnnounce(ctx, key, act, err)
		return
	}
	s.mu.Lock()
	s.inflight[key] = true
	s.mu.Unlock()
	s.sends.Add(1)
	go func() {
		defer s.sends.Done()
		defer s.doneSending(key)
		sendCtx, cancel := context.WithTimeout(ctx, s.cfg.SendTimeout)
		resp, err := s.cfg.Webhooks.Send(sendCtx, ports.WebhookRequest{URL: act.target, Body: act.body,
			Headers: map[string]string{"Content-Type": "application/json", "Webhook-Signature": act.header}})
		cancel()
		s.afterWebhook(ctx, key, act, resp, err)
	}()
}

func (s *Service) sending(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inflight[key]
}

func (s *Service) doneSending(key string) {
	s.mu.Lock()
	delete(s.inflight, key)
	s.mu.Unlock()
}

// afterAnnounce marks the wake announced; a failed append is retried on
// the persisted schedule.
func (s *Service) afterAnnounce(ctx context.Context, key string, act action, sendErr error) {
	if sendErr != nil {
		s.cfg.Logger.Warn("appending a wake record failed; retrying", "subscription", key, "stream", act.target, "err", sendErr)
		return
	}
	_, err := s.update(ctx, key, func(cur *record) (*record, error) {
		if !sameWake(cur, act.wakeID) || cur.Wake.Delivered {
			return nil, nil
		}
		cur.Wake.Delivered, cur.Wake.Attempts = true, 0
		return cur, nil
	})
	if err != nil && ctx.Err() == nil {
		s.cfg.Logger.Debug("recording a wake announcement failed", "subscription", key, "err", err)
	}
}

// afterWebhook records a delivery's outcome. A 2xx answer starts the
// worker's lease; {"done":true} acknowledges the tails the wake carried
// and ends it. Anything else marks the subscription failed; the next
// attempt is already scheduled.
func (s *Service) afterWebhook(ctx context.Context, key string, act action, resp ports.WebhookResponse, sendErr error) {
	ok := sendErr == nil && resp.Status >= 200 && resp.Status < 300
	if !ok {
		s.cfg.Logger.Warn("webhook delivery failed; retrying", "subscription", key, "status", resp.Status, "err", sendErr)
	}
	next := false
	_, err := s.update(ctx, key, func(cur *record) (*record, error) {
		next = false
		if !sameWake(cur, act.wakeID) {
			return nil, nil // the worker called back first, or the wake was replaced
		}
		return s.webhookOutcome(ctx, cur, ok, ok && saysDone(resp.Body), &next)
	})
	if err != nil && ctx.Err() == nil {
		s.cfg.Logger.Debug("recording a webhook outcome failed", "subscription", key, "err", err)
	}
	if next {
		s.wakeLoop()
	}
}

func (s *Service) webhookOutcome(ctx context.Context, r *record, ok, done bool, next *bool) (*record, error) {
	w := r.Wake
	switch {
	case !ok && (w.Delivered || r.Failed):
		return nil, nil
	case !ok:
		r.Failed = true
		return r, nil
	case done:
		r.Failed = false
		ackSnapshot(r, w.Snapshot)
		o, err := s.observe(ctx, r)
		if err != nil {
			return nil, err
		}
		*next = s.finishWake(r, o)
		return r, nil
	case w.Delivered && !r.Failed:
		return nil, nil
	}
	r.Failed, w.Delivered, w.Attempts = false, true, 0
	w.LeaseUntilMs = s.nowMs() + r.LeaseTTLMs
	return r, nil
}

func sameWake(r *record, wakeID string) bool {
	return r != nil && !r.deleted() && r.Wake != nil && r.Wake.ID == wakeID
}

// saysDone reports whether a webhook answer is {"done":true}.
func saysDone(body []byte) bool {
	var answer struct {
		Done bool `json:"done"`
	}
	return json.Unmarshal(body, &answer) == nil && answer.Done
}
