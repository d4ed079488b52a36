package domain

import (
	"testing"

	"pgregory.net/rapid"
)

// expires, which skips decoding most configurations, agrees with decoding
// them, for configurations and for any bytes.
func TestExpiresAgreesWithDecoding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := StreamConfig{
			ContentType:     rapid.StringN(0, 8, -1).Draw(t, "content type"),
			TTLSec:          rapid.Uint64Range(0, 3).Draw(t, "ttl"),
			ExpiresAtMs:     rapid.Int64Range(-2, 2).Draw(t, "expires at"),
			IdleTTLSec:      rapid.Uint64Range(0, 2).Draw(t, "idle ttl"),
			ForkAtGiven:     rapid.Bool().Draw(t, "fork at given"),
			ForkAt:          rapid.Uint64Range(0, 2).Draw(t, "fork at"),
			AccessedAtMs:    rapid.Int64Range(0, 2).Draw(t, "accessed at"),
			AccessedAtEpoch: rapid.Uint64Range(0, 2).Draw(t, "accessed epoch"),
		}
		meta := EncodeStreamConfig(cfg)
		if cut := rapid.IntRange(0, len(meta)).Draw(t, "cut"); rapid.Bool().Draw(t, "truncate") {
			meta = meta[:cut]
		}
		if rapid.Bool().Draw(t, "random") {
			meta = rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, "meta")
		}
		decoded, err := DecodeStreamConfig(meta)
		if want := err == nil && decoded.Expires(); expires(meta) != want {
			t.Fatalf("expires(%x) = %v, decoding gives %v (%v)", meta, !want, want, err)
		}
	})
}
