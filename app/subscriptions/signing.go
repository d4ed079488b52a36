package subscriptions

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
)

// signingKeysKey is the registry entry holding the cluster's webhook
// signing keys: generated once, by whichever node needs them first.
const signingKeysKey = "ds-webhook-signing-keys"

// storedKeys is the entry's value; the newest key signs, and every key is
// published so signatures made before a rotation still verify.
type storedKeys struct {
	Keys []storedKey `json:"keys"`
}

type storedKey struct {
	Seed      []byte `json:"seed"`
	CreatedMs int64  `json:"created_ms"`
}

type signingKey struct {
	kid  string
	priv ed25519.PrivateKey
}

// signingKeys caches the decoded key set; nil until first loaded.
type signingKeys struct {
	mu   sync.Mutex
	keys []signingKey
}

// signingKeySet loads the key set, creating it if the cluster has none.
// Of two nodes creating it at once, the one written first wins and the
// other adopts it.
func (s *Service) signingKeySet(ctx context.Context) ([]signingKey, error) {
	s.keys.mu.Lock()
	defer s.keys.mu.Unlock()
	if s.keys.keys != nil {
		return s.keys.keys, nil
	}
	v := s.cfg.Plane.View()
	e, ok := v.KV(domain.SpaceRegistry, signingKeysKey)
	if !ok {
		var err error
		if e.Value, err = s.createSigningKeys(ctx); err != nil {
			return nil, err
		}
	}
	keys, err := decodeSigningKeys(e.Value)
	if err != nil {
		return nil, err
	}
	s.keys.keys = keys
	return keys, nil
}

func (s *Service) createSigningKeys(ctx context.Context) ([]byte, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, err
	}
	value, _ := json.Marshal(storedKeys{Keys: []storedKey{{Seed: seed, CreatedMs: s.nowMs()}}})
	r, err := s.cfg.Plane.ProposeOne(ctx, &domain.PutKVIf{By: s.cfg.By, Space: domain.SpaceRegistry,
		Key: signingKeysKey, Value: value})
	switch {
	case err != nil:
		return nil, unavailable("cannot store the webhook signing key: %v", err)
	case r.OK():
		return value, nil
	case r.Code != domain.ResultRevMismatch:
		return nil, fmt.Errorf("subscriptions: store signing key: %s", r.Reason)
	}
	v := s.cfg.Plane.View()
	e, ok := v.KV(domain.SpaceRegistry, signingKeysKey)
	if !ok {
		return nil, unavailable("the webhook signing key vanished")
	}
	return e.Value, nil
}

func decodeSigningKeys(value []byte) ([]signingKey, error) {
	var stored storedKeys
	if err := json.Unmarshal(value, &stored); err != nil || len(stored.Keys) == 0 {
		return nil, fmt.Errorf("subscriptions: undecodable signing keys: %v", err)
	}
	keys := make([]signingKey, 0, len(stored.Keys))
	for _, k := range stored.Keys {
		if len(k.Seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("subscriptions: a signing key seed has %d bytes", len(k.Seed))
		}
		priv := ed25519.NewKeyFromSeed(k.Seed)
		keys = append(keys, signingKey{kid: keyID(priv.Public().(ed25519.PublicKey)), priv: priv})
	}
	return keys, nil
}

// keyID is "ds_" and the key's RFC 7638 thumbprint: the SHA-256 of its
// required JWK members in lexicographic order.
func keyID(pub ed25519.PublicKey) string {
	thumb := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(thumb))
	return "ds_" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// activeKey is the key that signs.
func (s *Service) activeKey(ctx context.Context) (signingKey, error) {
	keys, err := s.signingKeySet(ctx)
	if err != nil {
		return signingKey{}, err
	}
	return keys[len(keys)-1], nil
}

// JWKS returns the public signing keys; see ports.Subscriptions.
func (s *Service) JWKS(ctx context.Context) ([]ports.JWK, error) {
	keys, err := s.signingKeySet(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ports.JWK, 0, len(keys))
	for _, k := range keys {
		pub := k.priv.Public().(ed25519.PublicKey)
		out = append(out, ports.JWK{Kty: "OKP", Crv: "Ed25519", Kid: k.kid, Use: "sig", Alg: "EdDSA",
			X: base64.RawURLEncoding.EncodeToString(pub)})
	}
	return out, nil
}

// signature is the Webhook-Signature header of body sent at t: the
// signature covers "<unix seconds>.<body>", so a replay needs a fresh
// timestamp the receiver would reject.
func (k signingKey) signature(body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	sig := ed25519.Sign(k.priv, append([]byte(ts+"."), body...))
	return "t=" + ts + ",kid=" + k.kid + ",ed25519=" + base64.RawURLEncoding.EncodeToString(sig)
}
