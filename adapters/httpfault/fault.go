package httpfault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Fault is one armed fault, as the hook's JSON body describes it. Absent
// optional fields are nil.
type Fault struct {
	Path              string    `json:"path"`
	Method            string    `json:"method,omitempty"`
	Count             *int      `json:"count,omitempty"`
	Probability       *float64  `json:"probability,omitempty"`
	Status            *int      `json:"status,omitempty"`
	RetryAfter        *int      `json:"retryAfter,omitempty"`
	DelayMs           *int      `json:"delayMs,omitempty"`
	JitterMs          *int      `json:"jitterMs,omitempty"`
	DropConnection    bool      `json:"dropConnection,omitempty"`
	TruncateBodyBytes *int      `json:"truncateBodyBytes,omitempty"`
	CorruptBody       bool      `json:"corruptBody,omitempty"`
	InjectSSEEvent    *SSEEvent `json:"injectSseEvent,omitempty"`
}

// SSEEvent is an event written, as given, before an event stream's first.
type SSEEvent struct {
	EventType string `json:"eventType"`
	Data      string `json:"data"`
}

// Bounds of a fault: a hook for tests need not take more.
const (
	maxSpecBytes = 64 << 10
	maxCount     = 1 << 20
	maxDelay     = 60 * time.Second
)

var methods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"}

// ParseFault decodes and checks a hook's body. Unknown fields, trailing
// data and values out of range are errors, whose text says which.
func ParseFault(body io.Reader) (Fault, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxSpecBytes+1))
	if err != nil {
		return Fault{}, fmt.Errorf("reading the body: %w", err)
	}
	if len(raw) > maxSpecBytes {
		return Fault{}, fmt.Errorf("the body is over %d bytes", maxSpecBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var f Fault
	if err := dec.Decode(&f); err != nil {
		return Fault{}, fmt.Errorf("invalid JSON body: %w", err)
	}
	if dec.More() {
		return Fault{}, errors.New("invalid JSON body: data after the object")
	}
	return f, f.check()
}

func (f *Fault) check() error {
	if !strings.HasPrefix(f.Path, "/") {
		return errors.New("path must be given and start with /")
	}
	if f.Method != "" {
		f.Method = strings.ToUpper(f.Method)
		if !slices.Contains(methods, f.Method) {
			return fmt.Errorf("method %q is not one of %s", f.Method, strings.Join(methods, ", "))
		}
	}
	if f.Status == nil && f.DelayMs == nil && !f.DropConnection && f.TruncateBodyBytes == nil && !f.CorruptBody && f.InjectSSEEvent == nil {
		return errors.New("give at least one fault: status, delayMs, dropConnection, truncateBodyBytes, corruptBody or injectSseEvent")
	}
	for _, c := range []struct {
		name     string
		v        *int
		min, max int
	}{
		{"count", f.Count, 1, maxCount},
		{"status", f.Status, 200, 599},
		{"retryAfter", f.RetryAfter, 0, 86400},
		{"delayMs", f.DelayMs, 0, int(maxDelay / time.Millisecond)},
		{"jitterMs", f.JitterMs, 0, int(maxDelay / time.Millisecond)},
		{"truncateBodyBytes", f.TruncateBodyBytes, 0, 1 << 30},
	} {
		if c.v != nil && (*c.v < c.min || *c.v > c.max) {
			return fmt.Errorf("%s must be from %d to %d", c.name, c.min, c.max)
		}
	}
	if p := f.Probability; p != nil && !(*p >= 0 && *p <= 1) {
		return errors.New("probability must be from 0 to 1")
	}
	if e := f.InjectSSEEvent; e != nil && (e.EventType == "" || strings.ContainsAny(e.EventType, "\r\n")) {
		return errors.New("injectSseEvent.eventType must be one line, not empty")
	}
	return nil
}

// delay is how long the fault waits before it acts, its jitter drawn from
// u in [0, 1).
func (f *Fault) delay(u float64) time.Duration {
	d := time.Duration(deref(f.DelayMs)) * time.Millisecond
	return d + time.Duration(u*float64(deref(f.JitterMs))*float64(time.Millisecond))
}

// changesBody reports whether the fault changes the node's own answer.
func (f *Fault) changesBody() bool {
	return f.TruncateBodyBytes != nil || f.CorruptBody || f.InjectSSEEvent != nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
