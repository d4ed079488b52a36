package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxScopeJSON bounds a scope's JSON form.
const MaxScopeJSON = 64 << 10

// The scope's JSON form, the original's exactly: missing keys deny, and
// unknown keys, operations, audiences and matcher kinds are refused.
type scopeJSON struct {
	Streams           []matcherJSON `json:"streams"`
	Tokens            []matcherJSON `json:"tokens"`
	Groups            *groupsJSON   `json:"groups"`
	Ops               []string      `json:"ops"`
	Audiences         []string      `json:"audiences"`
	AutoPrefixStreams bool          `json:"autoPrefixStreams"`
	ExpiresAtMs       *int64        `json:"expiresAtMs"`
}

type groupsJSON struct {
	Stream *readWriteJSON `json:"stream,omitempty"`
	Tokens *readWriteJSON `json:"tokens,omitempty"`
	Admin  *readWriteJSON `json:"admin,omitempty"`
}

type readWriteJSON struct {
	Read  bool `json:"read"`
	Write bool `json:"write"`
}

type matcherJSON struct {
	Exact  *string `json:"exact,omitempty"`
	Prefix *string `json:"prefix,omitempty"`
}

// ParseScope reads a scope's JSON form strictly. It does not Validate.
func ParseScope(b []byte) (Scope, error) {
	if len(b) > MaxScopeJSON {
		return Scope{}, fmt.Errorf("a scope is at most %d bytes of JSON", MaxScopeJSON)
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Scope{}, errors.New("malformed scope: a scope is a JSON object")
	}
	var w scopeJSON
	if err := decodeStrict(b, &w); err != nil {
		return Scope{}, err
	}
	return w.scope()
}

// decodeStrict decodes one JSON value into v, refusing unknown keys and
// trailing data.
func decodeStrict(b []byte, v any) error {
	if !json.Valid(b) { // one JSON value and nothing after it
		return errors.New("malformed scope: not one JSON value")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("malformed scope: %v", err)
	}
	return exactKeys(json.NewDecoder(bytes.NewReader(b)))
}

// scopeKeys are the form's keys, at every level. encoding/json matches
// keys case-insensitively, folding some non-ASCII letters too, so without
// this check "Streams" or "ſtreams" would be read as "streams", and a
// case variant after the real key would silently replace it.
var scopeKeys = map[string]bool{"streams": true, "tokens": true, "groups": true, "ops": true,
	"audiences": true, "autoPrefixStreams": true, "expiresAtMs": true, "stream": true, "admin": true,
	"read": true, "write": true, "exact": true, "prefix": true}

// exactKeys refuses an object key not spelled exactly as one of the
// form's. It reads a value that already decoded into the form, so its
// nesting is shallow, and the decoder has checked each key's level.
func exactKeys(d *json.Decoder) error {
	tok, err := d.Token()
	if err != nil {
		return fmt.Errorf("malformed scope: %v", err)
	}
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return nil
	}
	for d.More() {
		if tok == json.Delim('{') {
			key, err := d.Token()
			if err != nil {
				return fmt.Errorf("malformed scope: %v", err)
			}
			if k, _ := key.(string); !scopeKeys[k] {
				return fmt.Errorf("malformed scope: unknown field %q", clipName(k))
			}
		}
		if err := exactKeys(d); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("malformed scope: %v", err)
	}
	return nil
}

func (w scopeJSON) scope() (Scope, error) {
	var s Scope
	var err error
	if s.Streams, err = matchersOf(w.Streams); err != nil {
		return Scope{}, err
	}
	if s.Tokens, err = matchersOf(w.Tokens); err != nil {
		return Scope{}, err
	}
	s.Groups = w.Groups.bits()
	for _, name := range w.Ops {
		op, ok := ParseOp(name)
		if !ok {
			return Scope{}, fmt.Errorf("unknown operation %q", clipName(name))
		}
		s.Ops |= 1 << op
	}
	for _, name := range w.Audiences {
		a, ok := ParseAudience(name)
		if !ok {
			return Scope{}, fmt.Errorf("unknown audience %q", clipName(name))
		}
		s.Audiences |= 1 << a
	}
	s.AutoPrefixStreams = w.AutoPrefixStreams
	if w.ExpiresAtMs != nil {
		s.Expires, s.ExpiresAtMs = true, *w.ExpiresAtMs
	}
	return s, nil
}

func matchersOf(ws []matcherJSON) (Matchers, error) {
	if len(ws) > MaxMatchers {
		return nil, fmt.Errorf("a matcher set holds at most %d matchers", MaxMatchers)
	}
	var ms Matchers
	for _, w := range ws {
		switch {
		case w.Exact != nil && w.Prefix == nil:
			ms = append(ms, Matcher{Value: *w.Exact})
		case w.Prefix != nil && w.Exact == nil:
			ms = append(ms, Matcher{Value: *w.Prefix, Prefix: true})
		default:
			return nil, errors.New(`a matcher is {"exact": NAME} or {"prefix": PREFIX}`)
		}
	}
	return ms, nil
}

func (g *groupsJSON) bits() uint8 {
	if g == nil {
		return 0
	}
	var bits uint8
	for i, rw := range []*readWriteJSON{g.Stream, g.Tokens, g.Admin} {
		if rw != nil && rw.Read {
			bits |= 1 << (2 * i)
		}
		if rw != nil && rw.Write {
			bits |= 1 << (2*i + 1)
		}
	}
	return bits
}

// MarshalJSON writes the scope's JSON form with every key present.
func (s Scope) MarshalJSON() ([]byte, error) {
	w := scopeJSON{Streams: matchersJSON(s.Streams), Tokens: matchersJSON(s.Tokens),
		Ops: []string{}, Audiences: []string{}, AutoPrefixStreams: s.AutoPrefixStreams}
	rw := func(i int) *readWriteJSON {
		return &readWriteJSON{Read: s.Groups&(1<<(2*i)) != 0, Write: s.Groups&(1<<(2*i+1)) != 0}
	}
	w.Groups = &groupsJSON{Stream: rw(0), Tokens: rw(1), Admin: rw(2)}
	for op := range numOps {
		if s.Ops&(1<<op) != 0 {
			w.Ops = append(w.Ops, op.String())
		}
	}
	for a := range numAudiences {
		if s.HasAudience(a) {
			w.Audiences = append(w.Audiences, a.String())
		}
	}
	if s.Expires {
		w.ExpiresAtMs = &s.ExpiresAtMs
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the strict JSON form (ParseScope).
func (s *Scope) UnmarshalJSON(b []byte) error {
	parsed, err := ParseScope(b)
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

func matchersJSON(ms Matchers) []matcherJSON {
	out := make([]matcherJSON, len(ms))
	for i, m := range ms {
		v := m.Value
		if m.Prefix {
			out[i].Prefix = &v
		} else {
			out[i].Exact = &v
		}
	}
	return out
}

// clipName shortens a name quoted in an error.
func clipName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
