package picohttp

import "github.com/picomq/pico/adapters/internal/server/streamsfake"

// fakeStreams is the in-memory service both listeners' tests drive.
type fakeStreams = streamsfake.Streams

func newFakeStreams() *fakeStreams { return streamsfake.New() }
