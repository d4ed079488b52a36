package subscriptions

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/picomq/pico/ports"
)

// keptTokens is how many recent token hashes a record keeps: a token of a
// recent wake is recognised (and fenced) rather than unknown.
const keptTokens = 4

// startWake begins the next wake: a higher generation and a fresh id, so
// every token, id and generation of earlier wakes is fenced.
func startWake(r *record, o observation, nowMs int64) {
	r.Generation++
	r.Wake = &wake{ID: "w_" + randomText(12), Stream: o.first, Snapshot: o.snapshot, NextAttemptMs: nowMs}
}

// issueToken mints the bearer token of the current wake. Only its hash is
// stored: the metadata never holds a usable token.
func issueToken(r *record) string {
	token := randomText(32)
	r.Tokens = append([]issuedToken{{Hash: tokenHash(token), Generation: r.Generation}}, r.Tokens...)
	r.Tokens = r.Tokens[:min(len(r.Tokens), keptTokens)]
	return token
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func randomText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// checkWake admits a worker's call on the current wake: the token must be
// one this subscription issued, and token, generation and wake id must all
// be the current wake's.
func checkWake(r *record, token, wakeID string, generation uint64, nowMs int64) error {
	issued, known := issuedFor(r, token)
	switch {
	case !known:
		return subErr(ports.ErrTokenInvalid, "token is not valid for this subscription")
	case r.Wake == nil || issued.Generation != r.Generation || generation != r.Generation || wakeID != r.Wake.ID:
		return subErr(ports.ErrFenced, "wake %s generation %d is not the current wake", wakeID, generation)
	case r.Wake.LeaseUntilMs != 0 && nowMs > r.Wake.LeaseUntilMs:
		return subErr(ports.ErrTokenExpired, "the wake's lease expired")
	}
	return nil
}

func issuedFor(r *record, token string) (issuedToken, bool) {
	h := tokenHash(token)
	for _, t := range r.Tokens {
		if t.Hash == h {
			return t, true
		}
	}
	return issuedToken{}, false
}

// leaseExpired: the wake's worker has been silent past its lease.
func (w *wake) leaseExpired(nowMs int64) bool { return w.LeaseUntilMs != 0 && nowMs > w.LeaseUntilMs }

// finishWake ends the current wake and, if work remains, starts the next.
func (s *Service) finishWake(r *record, o observation) (next bool) {
	r.Wake = nil
	if !o.pending() {
		return false
	}
	startWake(r, o, s.nowMs())
	return true
}
