package domain

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Token limits. An id is public and appears in URLs (DELETE
// /admin/tokens/ID); a secret is issued as IssuedSecretLen random bytes,
// and a bootstrap secret may be any length in [MinSecretLen, MaxSecretLen].
const (
	MaxTokenIDLen   = 96
	IssuedSecretLen = 32
	MinSecretLen    = 16
	MaxSecretLen    = 64
	// MaxAuthorization bounds an Authorization header's value.
	MaxAuthorization = 512
	// AnonymousTokenID is the reserved id whose scope applies to requests
	// without a credential. It is never a credential itself.
	AnonymousTokenID = "anonymous"
)

// ErrCredential is every malformed credential: the answer is 401.
var ErrCredential = errors.New("malformed credential")

// Credential is a parsed bearer token: its public id and its secret.
type Credential struct {
	ID     string
	Secret []byte
}

// ValidTokenID reports whether id may name a token: 1 to MaxTokenIDLen
// printable ASCII characters without spaces.
func ValidTokenID(id string) bool {
	if id == "" || len(id) > MaxTokenIDLen {
		return false
	}
	for i := range len(id) {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// ParseAuthorization reads an Authorization header's value. An empty
// value is no credential (ok false, no error); anything else must be
// "Bearer " and a wire token.
func ParseAuthorization(value string) (c Credential, ok bool, err error) {
	if value == "" {
		return Credential{}, false, nil
	}
	if len(value) > MaxAuthorization {
		return Credential{}, false, fmt.Errorf("%w: the Authorization header is over %d bytes", ErrCredential, MaxAuthorization)
	}
	scheme, token, found := strings.Cut(value, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return Credential{}, false, fmt.Errorf("%w: want Authorization: Bearer TOKEN", ErrCredential)
	}
	c, err = ParseToken(strings.TrimLeft(token, " "))
	return c, err == nil, err
}

// ParseToken reads the wire form BASE64URL(id).BASE64URL(secret), base64url
// without padding.
func ParseToken(wire string) (Credential, error) {
	idPart, secretPart, found := strings.Cut(wire, ".")
	if !found {
		return Credential{}, fmt.Errorf("%w: a token is BASE64URL(id).BASE64URL(secret)", ErrCredential)
	}
	if len(idPart) > tokenEncoding.EncodedLen(MaxTokenIDLen) {
		return Credential{}, fmt.Errorf("%w: a token's id is 1 to %d printable characters", ErrCredential, MaxTokenIDLen)
	}
	if len(secretPart) > tokenEncoding.EncodedLen(MaxSecretLen) {
		return Credential{}, fmt.Errorf("%w: a token's secret is %d to %d bytes", ErrCredential, MinSecretLen, MaxSecretLen)
	}
	// Decoded into arrays of the largest sizes, bounded above; strict, and
	// no line breaks (which the decoder skips): one token has one spelling.
	var idBuf [MaxTokenIDLen]byte
	var secretBuf [MaxSecretLen]byte
	idLen, err1 := tokenEncoding.Decode(idBuf[:], []byte(idPart))
	secretLen, err2 := tokenEncoding.Decode(secretBuf[:], []byte(secretPart))
	id, secret := string(idBuf[:idLen]), secretBuf[:secretLen]
	switch {
	case err1 != nil || err2 != nil || strings.IndexByte(wire, '\n') >= 0 || strings.IndexByte(wire, '\r') >= 0:
		return Credential{}, fmt.Errorf("%w: a token's parts are base64url without padding", ErrCredential)
	case !ValidTokenID(id) || id == AnonymousTokenID:
		return Credential{}, fmt.Errorf("%w: a token's id is 1 to %d printable characters", ErrCredential, MaxTokenIDLen)
	case len(secret) < MinSecretLen:
		return Credential{}, fmt.Errorf("%w: a token's secret is %d to %d bytes", ErrCredential, MinSecretLen, MaxSecretLen)
	}
	return Credential{ID: id, Secret: append([]byte(nil), secret...)}, nil
}

var tokenEncoding = base64.RawURLEncoding.Strict()

// FormatToken writes a credential's wire form.
func FormatToken(c Credential) string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.ID)) + "." + base64.RawURLEncoding.EncodeToString(c.Secret)
}

// Verifier is what is stored of a secret: its SHA-256.
type Verifier [sha256.Size]byte

// VerifierOf hashes a secret.
func VerifierOf(secret []byte) Verifier { return sha256.Sum256(secret) }

// TokenRecord is a token as the metadata state holds it, in the tokens key
// space under its id: never its secret, only the secret's Verifier.
type TokenRecord struct {
	Verifier    Verifier
	Scope       Scope
	Issuer      string // the id of the token that issued it; "" for a bootstrap token
	CreatedAtMs int64
}

// tokenRecordVersion leads every encoded record; a new version adds
// fields after the old ones.
const tokenRecordVersion = 1

// EncodeTokenRecord writes a record's stored form.
func EncodeTokenRecord(r TokenRecord) []byte {
	e := &encoder{}
	e.u8(tokenRecordVersion)
	e.bytes(r.Verifier[:])
	e.str(r.Issuer)
	e.varint(r.CreatedAtMs)
	e.scope(r.Scope)
	return e.buf
}

// DecodeTokenRecord reads a record's stored form.
func DecodeTokenRecord(b []byte) (TokenRecord, error) {
	d := &decoder{buf: b}
	var r TokenRecord
	if v := d.u8(); d.err == nil && v != tokenRecordVersion {
		return TokenRecord{}, fmt.Errorf("%w: token record version %d", ErrDecode, v)
	}
	if v := d.bytes(); d.err == nil && len(v) != len(r.Verifier) {
		d.fail("verifier of %d bytes", len(v))
	} else {
		copy(r.Verifier[:], v)
	}
	r.Issuer = d.str()
	r.CreatedAtMs = d.varint()
	r.Scope = d.scope()
	if err := d.finish(); err != nil {
		return TokenRecord{}, err
	}
	return r, nil
}

func (e *encoder) scope(s Scope) {
	e.matchers(s.Streams)
	e.matchers(s.Tokens)
	e.u8(s.Groups)
	e.uvarint(uint64(s.Ops))
	e.u8(s.Audiences)
	e.boolean(s.AutoPrefixStreams)
	e.boolean(s.Expires)
	e.varint(s.ExpiresAtMs)
}

func (e *encoder) matchers(ms Matchers) {
	e.uvarint(uint64(len(ms)))
	for _, m := range ms {
		e.boolean(m.Prefix)
		e.str(m.Value)
	}
}

func (d *decoder) scope() Scope {
	s := Scope{Streams: d.matchers(), Tokens: d.matchers(), Groups: d.u8(), Ops: d.u32(), Audiences: d.u8(),
		AutoPrefixStreams: d.boolean(), Expires: d.boolean(), ExpiresAtMs: d.varint()}
	if d.err == nil {
		if err := s.Validate(); err != nil {
			d.fail("token scope: %v", err)
		}
	}
	return s
}

func (d *decoder) matchers() Matchers {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	ms := make(Matchers, n)
	for i := range ms {
		ms[i] = Matcher{Prefix: d.boolean(), Value: d.str()}
	}
	return ms
}
