package conformance_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/conformance"
)

// brokenRuleEnv names, in a child test process, the rule its service
// breaks.
const brokenRuleEnv = "PICO_CONFORMANCE_BROKEN_RULE"

// brokenRule is the real service wrapped to break one rule of the port, and
// the case of the suite that must catch it.
type brokenRule struct {
	wrap     func(ports.Streams) ports.Streams
	caughtBy string
}

var brokenRules = map[string]brokenRule{
	"producer-dedup": {func(s ports.Streams) ports.Streams { return &rewritingDuplicates{Streams: s} }, "ProducerRetryIsADuplicate"},
	"match-next":     {func(s ports.Streams) ports.Streams { return ignoringMatchNext{s} }, "MatchNextIsAConditionalAppend"},
	"trim-start":     {func(s ports.Streams) ports.Streams { return overstatingTrim{s} }, "TrimDropsRecordsBelowTheStart"},
}

// TestStreamsSuiteCatchesBrokenRules proves the suite can fail. A
// *testing.T cannot be faked, so each broken service runs the suite in a
// child process of this test binary, which must exit non-zero, fail the
// case that states the rule, and still pass the cases it does not break.
func TestStreamsSuiteCatchesBrokenRules(t *testing.T) {
	for rule, broken := range brokenRules {
		t.Run(rule, func(t *testing.T) {
			out, err := runBrokenSuite(t, rule)
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite on a service breaking %s ended with %v, want a failing exit\n%s", rule, err, out)
			}
			for _, want := range []string{
				"--- FAIL: TestStreamsOnABrokenService/" + broken.caughtBy + " (",
				"--- PASS: TestStreamsOnABrokenService/CreateMakesAStreamWithItsInitialRecords (",
			} {
				if !strings.Contains(out, want) {
					t.Fatalf("the suite on a service breaking %s does not report %q\n%s", rule, want, out)
				}
			}
		})
	}
}

// runBrokenSuite runs TestStreamsOnABrokenService in a child process on a
// service breaking rule, and returns its output.
func runBrokenSuite(t *testing.T, rule string) (string, error) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStreamsOnABrokenService$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), brokenRuleEnv+"="+rule)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestStreamsOnABrokenService is the child of
// TestStreamsSuiteCatchesBrokenRules, and is meant to fail.
func TestStreamsOnABrokenService(t *testing.T) {
	rule := os.Getenv(brokenRuleEnv)
	if rule == "" {
		t.Skip("runs only as a child of TestStreamsSuiteCatchesBrokenRules")
	}
	broken, ok := brokenRules[rule]
	if !ok {
		t.Fatalf("no broken rule %q", rule)
	}
	conformance.Streams(t, func(t *testing.T) (ports.Streams, *conformance.Clock) {
		s, clock := openService(t)
		return broken.wrap(s), clock
	}, serviceFeatures)
}

// rewritingDuplicates writes a producer's repeat again instead of
// acknowledging it.
type rewritingDuplicates struct {
	ports.Streams
	mu   sync.Mutex
	seen map[producedTo]bool
}

type producedTo struct {
	name  string
	stamp domain.ProducerStamp
}

func (s *rewritingDuplicates) Append(ctx context.Context, name string, req ports.AppendRequest) (ports.AppendResult, error) {
	if p := req.Producer; p != nil && s.repeats(name, *p) {
		req.Producer = nil
	}
	return s.Streams.Append(ctx, name, req)
}

// repeats reports whether the stamp was seen on name before, and notes it.
func (s *rewritingDuplicates) repeats(name string, p domain.ProducerStamp) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[producedTo]bool{}
	}
	key := producedTo{name, p}
	seen := s.seen[key]
	s.seen[key] = true
	return seen
}

// ignoringMatchNext appends whatever the tail.
type ignoringMatchNext struct{ ports.Streams }

func (s ignoringMatchNext) Append(ctx context.Context, name string, req ports.AppendRequest) (ports.AppendResult, error) {
	req.MatchNext = nil
	return s.Streams.Append(ctx, name, req)
}

// overstatingTrim reports the start asked for, whatever it trimmed.
type overstatingTrim struct{ ports.Streams }

func (s overstatingTrim) Trim(ctx context.Context, name string, seq uint64) (uint64, error) {
	_, err := s.Streams.Trim(ctx, name, seq)
	return seq, err
}
