package picoclient

import (
	"context"
	"iter"
	"time"
)

// SubscribeOptions choose where a subscription starts.
type SubscribeOptions struct {
	Seq uint64 // first seq to deliver, e.g. one past the last one processed
	Now bool   // start at the tail instead: only records appended from now
	// MaxBackoff caps the wait between reconnections; 0 means 2 s.
	MaxBackoff time.Duration
}

// Subscribe follows the stream live: it yields every record from the
// starting seq on, in order and once, waiting at the tail with long polls.
// A failure the server or the network may recover from (a restart, a
// failover, a stream moving to another node, a 503) is retried with
// backoff from the next seq to deliver, so a subscription outlives them.
//
// It ends without an error once a closed stream has been read to its end.
// It yields an error and ends when the server refuses the read (the stream
// is missing, the credential is not allowed) or when ctx ends (ctx's
// error). Break out of the loop to stop early.
//
// Long polls carry binary pages, so records arrive in batches without any
// encoding overhead; a node with many subscribers holds one request each.
func (c *Client) Subscribe(ctx context.Context, name string, opts SubscribeOptions) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		page := ReadOptions{Seq: opts.Seq, Now: opts.Now, LongPoll: true}
		wait := newBackoff(opts.MaxBackoff)
		for {
			asked := time.Now()
			got, err := c.ReadPage(ctx, name, page)
			if err != nil {
				if ctx.Err() != nil {
					yield(Record{}, ctx.Err())
					return
				}
				if !transient(err) {
					yield(Record{}, err)
					return
				}
				if err := wait.wait(ctx, err); err != nil {
					yield(Record{}, err)
					return
				}
				continue
			}
			for _, r := range got.Records {
				if !yield(r, nil) {
					return
				}
			}
			if got.Closed && got.UpToDate {
				return
			}
			if err := pace(ctx, &wait, len(got.Records), time.Since(asked)); err != nil {
				yield(Record{}, err)
				return
			}
			next := got.Next
			if !page.Now {
				next = max(next, page.Seq) // never back
			}
			page = ReadOptions{Seq: next, LongPoll: true}
		}
	}
}

// quickEmpty is an answer without records sooner than any long poll waits:
// a node shutting down answers at once, and polling it again at once
// would spin.
const quickEmpty = 50 * time.Millisecond

// pace backs off after a quick empty answer and starts the waits over
// after any other.
func pace(ctx context.Context, wait *backoff, records int, took time.Duration) error {
	if records == 0 && took < quickEmpty {
		return wait.wait(ctx, nil)
	}
	wait.reset()
	return nil
}
