package streamsfake_test

import (
	"testing"

	"github.com/picomq/pico/adapters/internal/server/streamsfake"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/conformance"
)

// fakeFeatures: the fake does not fork and reads no settable clock (see the
// package doc), so those cases do not run.
var fakeFeatures = conformance.StreamsFeatures{Forks: false, Clock: false}

// TestConformance runs the ports.Streams suite on the fake, here because
// Go's internal rule keeps the fake out of tests/conformance's reach.
func TestConformance(t *testing.T) {
	conformance.Streams(t, openFake, fakeFeatures)
}

func openFake(*testing.T) (ports.Streams, *conformance.Clock) { return streamsfake.New(), nil }
