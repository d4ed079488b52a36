package domain

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// streamConfigGolden is stored under a subfolder of testdata/golden: the
// files directly in it are command encodings, one per command type.
var streamConfigGolden = filepath.Join("testdata", "golden", "wire", "stream_config_v1.hex")

// streamConfigSample has every field non-zero and a non-ASCII content type.
var streamConfigSample = StreamConfig{
	ContentType: "text/plain; charset=utf-8; name=\"café\"",
	TTLSec:      86_400,
	ExpiresAtMs: 1_700_000_000_123,
}

// streamConfigFullSample has the later fields too (idle TTL, fork, access
// time), in their own golden file.
var streamConfigFullSample = StreamConfig{
	ContentType: "application/json", TTLSec: 60, ExpiresAtMs: 1_700_000_000_123,
	IdleTTLSec: 3600, ForkAtGiven: true, ForkAt: 42, ForkSub: 7, AccessedAtMs: 1_700_000_500_000, AccessedAtEpoch: 3,
}

// streamConfigSchemaSample adds the schema binding.
var streamConfigSchemaSample = StreamConfig{ContentType: "application/json", Schema: "orders.v2", SchemaValidate: true}

func TestStreamConfigGolden(t *testing.T) {
	checkStreamConfigGolden(t, streamConfigGolden, streamConfigSample)
	checkStreamConfigGolden(t, filepath.Join("testdata", "golden", "wire", "stream_config_v1_full.hex"), streamConfigFullSample)
	checkStreamConfigGolden(t, filepath.Join("testdata", "golden", "wire", "stream_config_v1_schema.hex"), streamConfigSchemaSample)
}

func checkStreamConfigGolden(t *testing.T, file string, sample StreamConfig) {
	t.Helper()
	if *update {
		out := hex.EncodeToString(EncodeStreamConfig(sample)) + "\n"
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("missing golden file (run with -update): %v", err)
	}
	want, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := DecodeStreamConfig(want)
	if err != nil {
		t.Fatalf("decode golden: %v", err)
	}
	if cfg != sample {
		t.Fatalf("golden decodes to %+v, want %+v", cfg, sample)
	}
	if got := EncodeStreamConfig(cfg); !bytes.Equal(got, want) {
		t.Errorf("re-encoding changed the bytes:\n got %x\nwant %x", got, want)
	}
}

func TestStreamConfigLayout(t *testing.T) {
	got := EncodeStreamConfig(StreamConfig{ContentType: "a/b", TTLSec: 300, ExpiresAtMs: -1})
	want := []byte{1, 3, 'a', '/', 'b', 0xac, 0x02, 0x01}
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeStreamConfig = %x, want %x", got, want)
	}
}

func TestDecodeStreamConfigEmptyMetaIsDefault(t *testing.T) {
	for _, meta := range [][]byte{nil, {}} {
		cfg, err := DecodeStreamConfig(meta)
		if err != nil || cfg != (StreamConfig{ContentType: DefaultContentType}) {
			t.Fatalf("DecodeStreamConfig(%x) = %+v, %v", meta, cfg, err)
		}
	}
}

// TestDecodeStreamConfigIgnoresLaterFields is the evolution rule: a later
// encoder appends fields, and this decoder reads past them.
func TestDecodeStreamConfigIgnoresLaterFields(t *testing.T) {
	sample := streamConfigSample
	sample.IdleTTLSec, sample.ForkAtGiven, sample.ForkAt, sample.ForkSub = 7, true, 40, 3
	sample.AccessedAtMs, sample.AccessedAtEpoch = 1_700_000_000_456, 2
	sample.Schema, sample.SchemaValidate = "orders", true
	later := binary.AppendUvarint(EncodeStreamConfig(sample), 12345)
	later = append(later, "a later field"...)
	cfg, err := DecodeStreamConfig(later)
	if err != nil || cfg != sample {
		t.Fatalf("DecodeStreamConfig = %+v, %v; want %+v", cfg, err, sample)
	}
	// Meta written before the idle TTL and fork fields existed reads them
	// as 0, and so does meta that has the idle TTL but no fork fields.
	if cfg, err := DecodeStreamConfig(EncodeStreamConfig(streamConfigSample)); err != nil || cfg != streamConfigSample {
		t.Fatalf("older meta: %+v, %v", cfg, err)
	}
	idleOnly := streamConfigSample
	idleOnly.IdleTTLSec = 9
	if cfg, err := DecodeStreamConfig(EncodeStreamConfig(idleOnly)); err != nil || cfg != idleOnly {
		t.Fatalf("idle TTL only: %+v, %v", cfg, err)
	}
	// Meta with the fork fields but no access time reads it as 0.
	forked := idleOnly
	forked.ForkAt = 5
	if cfg, err := DecodeStreamConfig(EncodeStreamConfig(forked)); err != nil || cfg != forked {
		t.Fatalf("fork fields only: %+v, %v", cfg, err)
	}
}

func TestDecodeStreamConfigRejects(t *testing.T) {
	overlong := bytes.Repeat([]byte{0xff}, 11)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"version 0", []byte{0, 0, 0, 0}, "unknown stream config version 0"},
		{"version 2", []byte{2, 0, 0, 0}, "unknown stream config version 2"},
		{"legacy plain content type", []byte("application/json"), "unknown stream config version 97"},
		{"no content type", []byte{1}, "content type length truncated"},
		{"content type length overflows", append([]byte{1}, overlong...), "content type length truncated"},
		{"content type past end", []byte{1, 5, 'a', 'b'}, "content type length 5 past the end (2 bytes left)"},
		{"huge content type length", append([]byte{1}, binary.AppendUvarint(nil, math.MaxUint64)...), "past the end"},
		{"no TTL", []byte{1, 1, 'a'}, "TTL truncated"},
		{"TTL cut", []byte{1, 0, 0x80}, "TTL truncated"},
		{"TTL overflows", append([]byte{1, 0}, overlong...), "TTL truncated or too long"},
		{"no expiry", []byte{1, 0, 0}, "expiry truncated"},
		{"expiry overflows", append([]byte{1, 0, 0}, overlong...), "expiry truncated or too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeStreamConfig(tc.in)
			wantMalformed(t, err, tc.want)
		})
	}
	full := EncodeStreamConfig(streamConfigFullSample)
	_, err := DecodeStreamConfig(full[:len(full)-1])
	wantMalformed(t, err, "access epoch truncated")
}

func TestStreamConfigRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := StreamConfig{
			ContentType: rapid.OneOf(rapid.String(), rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) })).Draw(t, "content type"),
			TTLSec:      rapid.Uint64().Draw(t, "ttl"),
			ExpiresAtMs: rapid.Int64().Draw(t, "expires"),
		}
		if rapid.Bool().Draw(t, "later fields") {
			cfg.IdleTTLSec = rapid.Uint64().Draw(t, "idle ttl")
			cfg.ForkAtGiven = rapid.Bool().Draw(t, "fork at given")
			cfg.ForkAt = rapid.Uint64().Draw(t, "fork at")
			cfg.ForkSub = rapid.Uint64().Draw(t, "fork sub")
			cfg.AccessedAtMs = rapid.Int64().Draw(t, "accessed at")
			cfg.AccessedAtEpoch = rapid.Uint64().Draw(t, "accessed at epoch")
			cfg.Schema = rapid.String().Draw(t, "schema")
			cfg.SchemaValidate = rapid.Bool().Draw(t, "schema validate")
		}
		got, err := DecodeStreamConfig(EncodeStreamConfig(cfg))
		if err != nil || got != cfg {
			t.Fatalf("round trip of %+v = %+v, %v", cfg, got, err)
		}
	})
}

// FuzzDecodeStreamConfig feeds bytes to the stream config decoder.
func FuzzDecodeStreamConfig(f *testing.F) {
	for _, s := range []string{"", "0", "00", "1", "-1", "-0", "-", "+1", " 1", "true", "TRUE", "False", "falſe",
		"9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
		"00000000000000000042", "-9223372036854775809", "1e3", "now",
		string(EncodeStreamConfig(streamConfigSample)), string(EncodeStreamConfig(streamConfigFullSample)), string(EncodeStreamConfig(StreamConfig{})),
		string(EncodeStreamConfig(streamConfigSchemaSample)),
		"\x01\x00\x00\x00trailing", "\x01\x05ab", "\x02\x00\x00\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, meta []byte) {
		checkStreamConfig(t, meta)
	})
}

func checkStreamConfig(t *testing.T, meta []byte) {
	cfg, err := DecodeStreamConfig(meta)
	if err != nil {
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("DecodeStreamConfig(%x): error does not wrap ErrMalformed: %v", meta, err)
		}
		return
	}
	enc := EncodeStreamConfig(cfg)
	again, err := DecodeStreamConfig(enc)
	if err != nil || again != cfg {
		t.Fatalf("DecodeStreamConfig(%x) = %+v, but its encoding %x decodes to %+v, %v", meta, cfg, enc, again, err)
	}
	// Canonical varints are the shortest, so no meta is shorter than the
	// encoding of what it decodes to.
	if len(meta) > 0 && len(meta) < len(enc) {
		t.Fatalf("DecodeStreamConfig(%x) read %d bytes of fields from fewer", meta, len(enc))
	}
}

// wantMalformed fails unless err wraps ErrMalformed and its message
// contains every fragment.
func wantMalformed(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", fragments)
	}
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("error %q does not wrap ErrMalformed", err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Fatalf("error %q does not mention %q", err, f)
		}
	}
}
