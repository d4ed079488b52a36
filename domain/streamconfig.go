package domain

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// DefaultContentType is a stream's content type when its creator gives none.
const DefaultContentType = "application/octet-stream"

// StreamConfig is a stream's protocol-level configuration, stored as the
// stream's Meta (EncodeStreamConfig) and shared by both wire protocols.
type StreamConfig struct {
	// ContentType is the content type of the stream's records.
	ContentType string
	// TTLSec is record retention: records older than this many seconds are
	// trimmed in the background. 0 keeps records forever.
	TTLSec uint64
	// ExpiresAtMs is when the whole stream expires (unix ms); 0 never.
	ExpiresAtMs int64
	// IdleTTLSec is a sliding expiry: the stream expires this many seconds
	// after its last read or write (not counting metadata reads). 0 never.
	// This is the Durable Streams Stream-TTL.
	IdleTTLSec uint64
	// ForkAt and ForkSub record how a fork was asked for (the fork point
	// given, if ForkAtGiven, and the sub-offset), so that asking again is
	// recognised as the same request.
	ForkAtGiven bool
	ForkAt      uint64
	ForkSub     uint64
	// AccessedAtMs is when a stream with an idle TTL was last read or
	// written, as its writer recorded it on letting the stream go (unix ms;
	// 0: never recorded), and AccessedAtEpoch the stream epoch it wrote at.
	// They let the stream expire while nobody holds it; a later writer (a
	// higher epoch) makes them stale.
	AccessedAtMs    int64
	AccessedAtEpoch uint64
	// Schema names the schema the stream binds to ("" for none), and
	// SchemaValidate says whether appends must match it.
	Schema         string
	SchemaValidate bool
}

// Timed reports whether time alone changes the stream: its records age
// out, or the stream itself expires.
func (c StreamConfig) Timed() bool {
	return c.TTLSec > 0 || c.ExpiresAtMs != 0 || c.IdleTTLSec > 0
}

// Expires reports whether the stream itself can expire: at an absolute
// time, or once idle for its idle TTL.
func (c StreamConfig) Expires() bool {
	return c.ExpiresAtMs != 0 || c.IdleTTLSec > 0
}

// IsJSON reports whether a content type is JSON (application/json, any
// parameters): such streams hold one JSON value per record.
func IsJSON(contentType string) bool {
	return strings.EqualFold(mediaType(contentType), "application/json")
}

// ValidJSON reports whether b is one JSON value in UTF-8, as JSON exchanged
// between systems must be (RFC 8259): json.Valid alone lets any bytes
// through inside strings, and lone surrogate escapes, which no reader can
// turn into text (see InvalidText).
func ValidJSON(b []byte) bool {
	return json.Valid(b) && InvalidText(b) < 0
}

// SameContentType reports whether two content types name the same media
// type: compared case-insensitively, parameters ignored.
func SameContentType(a, b string) bool {
	return strings.EqualFold(mediaType(a), mediaType(b))
}

func mediaType(ct string) string {
	if ct == "" {
		return DefaultContentType
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.TrimSpace(mt)
}

// streamConfigVersion is the first byte of an encoded StreamConfig.
//
// Layout of version 1:
//
//	u8 version=1 | uvarint len | content type | uvarint ttl_sec | varint expires_at_ms
//	[ | uvarint idle_ttl_sec [ | u8 fork_at_given | uvarint fork_at | uvarint fork_sub
//	[ | varint accessed_at_ms | uvarint accessed_at_epoch
//	[ | uvarint len | schema | u8 schema_validate ] ] ] ]
//	(added later in version 1; absent fields read as 0)
//
// Evolution rule: new fields are only ever appended. A decoder reads the
// fields it knows and ignores any bytes after them, so older nodes keep
// reading meta written by newer ones; a newer decoder reads a field added
// after version 1 as zero when the meta ends before it. A trailing field is
// written only when it or a field after it is not zero, so meta of configs
// that do not use it stays byte-identical. The version changes only for a
// change older decoders must not misread, and they reject it.
const streamConfigVersion = 1

// EncodeStreamConfig returns the stream Meta for cfg: a version byte, then
// the fields; decoders of older versions keep working as fields are added
// (see streamConfigVersion).
func EncodeStreamConfig(cfg StreamConfig) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64*3+len(cfg.ContentType))
	b = append(b, streamConfigVersion)
	b = binary.AppendUvarint(b, uint64(len(cfg.ContentType)))
	b = append(b, cfg.ContentType...)
	b = binary.AppendUvarint(b, cfg.TTLSec)
	b = binary.AppendVarint(b, cfg.ExpiresAtMs)
	// Later fields are written only when set, and then every one before
	// them too: fields are positional.
	schema := cfg.Schema != "" || cfg.SchemaValidate
	accessed := cfg.AccessedAtMs != 0 || cfg.AccessedAtEpoch != 0 || schema
	forked := cfg.ForkAtGiven || cfg.ForkAt != 0 || cfg.ForkSub != 0 || accessed
	if cfg.IdleTTLSec != 0 || forked {
		b = binary.AppendUvarint(b, cfg.IdleTTLSec)
	}
	if forked {
		b = append(b, boolByte(cfg.ForkAtGiven))
		b = binary.AppendUvarint(b, cfg.ForkAt)
		b = binary.AppendUvarint(b, cfg.ForkSub)
	}
	if accessed {
		b = binary.AppendVarint(b, cfg.AccessedAtMs)
		b = binary.AppendUvarint(b, cfg.AccessedAtEpoch)
	}
	if schema {
		b = binary.AppendUvarint(b, uint64(len(cfg.Schema)))
		b = append(b, cfg.Schema...)
		b = append(b, boolByte(cfg.SchemaValidate))
	}
	return b
}

// ErrMalformed is wrapped by every error decoding client-supplied bytes
// outside the command codec: a stream's Meta here, and the wire codecs
// and header parsers of the adapters, so one sentinel marks bad client
// input. The message after it says what is wrong,
// fit to show a client in a 400; records and headers are numbered from 0,
// as indexes into the batch.
var ErrMalformed = errors.New("malformed")

// malformed returns an error wrapping ErrMalformed with the formatted reason.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// DecodeStreamConfig decodes a stream's Meta. Empty meta is the default
// config (DefaultContentType, no TTL, no expiry). It rejects an unknown
// version and truncated fields; bytes after the known fields are ignored,
// being fields of a later encoder. The content type is kept as stored, even
// if empty.
func DecodeStreamConfig(meta []byte) (StreamConfig, error) {
	if len(meta) == 0 {
		return StreamConfig{ContentType: DefaultContentType}, nil
	}
	if meta[0] != streamConfigVersion {
		return StreamConfig{}, malformed("unknown stream config version %d (want %d)", meta[0], streamConfigVersion)
	}
	rest := meta[1:]
	n, size := binary.Uvarint(rest)
	if size <= 0 {
		return StreamConfig{}, malformed("stream config: content type length truncated or too long")
	}
	rest = rest[size:]
	if n > uint64(len(rest)) {
		return StreamConfig{}, malformed("stream config: content type length %d past the end (%d bytes left)", n, len(rest))
	}
	cfg := StreamConfig{ContentType: string(rest[:n])}
	rest = rest[n:]
	if cfg.TTLSec, size = binary.Uvarint(rest); size <= 0 {
		return StreamConfig{}, malformed("stream config: TTL truncated or too long")
	}
	rest = rest[size:]
	if cfg.ExpiresAtMs, size = binary.Varint(rest); size <= 0 {
		return StreamConfig{}, malformed("stream config: expiry truncated or too long")
	}
	if rest = rest[size:]; len(rest) == 0 {
		return cfg, nil
	}
	if cfg.IdleTTLSec, size = binary.Uvarint(rest); size <= 0 {
		return StreamConfig{}, malformed("stream config: idle TTL truncated or too long")
	}
	if rest = rest[size:]; len(rest) == 0 {
		return cfg, nil
	}
	return decodeForkConfig(cfg, rest)
}

func decodeForkConfig(cfg StreamConfig, rest []byte) (StreamConfig, error) {
	if rest[0] > 1 {
		return StreamConfig{}, malformed("stream config: fork flag %d", rest[0])
	}
	cfg.ForkAtGiven = rest[0] == 1
	rest = rest[1:]
	var size int
	if cfg.ForkAt, size = binary.Uvarint(rest); size <= 0 {
		return StreamConfig{}, malformed("stream config: fork point truncated or too long")
	}
	rest = rest[size:]
	if cfg.ForkSub, size = binary.Uvarint(rest); size <= 0 {
		return StreamConfig{}, malformed("stream config: fork sub-offset truncated or too long")
	}
	if rest = rest[size:]; len(rest) == 0 {
		return cfg, nil
	}
	if cfg.AccessedAtMs, size = binary.Varint(rest); size <= 0 {
		return StreamConfig{}, malformed("stream config: access time truncated or too long")
	}
	rest = rest[size:]
	if cfg.AccessedAtEpoch, size = binary.Uvarint(rest); size <= 0 {
		return StreamConfig{}, malformed("stream config: access epoch truncated or too long")
	}
	if rest = rest[size:]; len(rest) == 0 {
		return cfg, nil
	}
	return decodeSchemaConfig(cfg, rest)
}

func decodeSchemaConfig(cfg StreamConfig, rest []byte) (StreamConfig, error) {
	n, size := binary.Uvarint(rest)
	if size <= 0 || n > uint64(len(rest)-size) {
		return StreamConfig{}, malformed("stream config: schema name truncated")
	}
	rest = rest[size:]
	cfg.Schema, rest = string(rest[:n]), rest[n:]
	if len(rest) == 0 || rest[0] > 1 {
		return StreamConfig{}, malformed("stream config: schema validation flag missing or not 0 or 1")
	}
	cfg.SchemaValidate = rest[0] == 1
	return cfg, nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
