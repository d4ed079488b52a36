package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/picomq/pico/adapters/adminclient"
)

// drainPollEvery is how often drain --wait asks for the drain's progress.
var drainPollEvery = 500 * time.Millisecond

// adminDrain starts (or resumes) node N's drain on the node asked, and
// with --wait follows it until N is home to no stream, writing its
// progress to stderr whenever it changes.
func adminDrain(ctx context.Context, c *adminCommand, stdout io.Writer) error {
	id, err := c.nodeArg()
	if err != nil {
		return err
	}
	client, err := c.client()
	if err != nil {
		return err
	}
	d, err := client.DrainNode(ctx, id)
	if err != nil {
		return err
	}
	reportDrain(c.stderr, d, d)
	if c.wait {
		if d, err = awaitDrained(ctx, client, c.stderr, d); err != nil {
			return err
		}
	}
	return c.print(stdout, d, func(w io.Writer) { drainRows(w, d) })
}

// awaitDrained polls node d.Node's drain until it is home to no stream,
// and fails if the drain stops with streams left.
func awaitDrained(ctx context.Context, client *adminclient.Client, stderr io.Writer, d adminclient.Drain) (adminclient.Drain, error) {
	for d.Remaining > 0 {
		if !d.Running {
			return d, fmt.Errorf("the drain of node %d stopped with %d streams left: %s; run it again to continue", d.Node, d.Remaining, d.LastError)
		}
		pause(ctx, drainPollEvery)
		if ctx.Err() != nil {
			return d, ctx.Err()
		}
		next, err := client.DrainProgress(ctx, d.Node)
		if err != nil {
			return d, err
		}
		if next.Moved != d.Moved || next.Remaining != d.Remaining || next.FailedMoves != d.FailedMoves {
			reportDrain(stderr, next, d)
		}
		d = next
	}
	return d, nil
}

// reportDrain writes a drain's progress, and the latest failure if more
// moves failed than at the last report.
func reportDrain(stderr io.Writer, d, last adminclient.Drain) {
	fmt.Fprintf(stderr, "drain node %d: %d/%d streams moved\n", d.Node, d.Moved, d.Moved+d.Remaining)
	if d.FailedMoves > last.FailedMoves {
		fmt.Fprintf(stderr, "drain node %d: %d moves failed so far, each retried; the latest: %s\n", d.Node, d.FailedMoves, d.LastError)
	}
}

func drainRows(w io.Writer, d adminclient.Drain) {
	fmt.Fprintf(w, "node\t%d\nslots\t%d\nstreams left\t%d\nmoved\t%d\nrunning\t%t\n", d.Node, d.Slots, d.Remaining, d.Moved, d.Running)
	optionalRow(w, "failed moves", d.FailedMoves != 0, strconv.Itoa(d.FailedMoves))
	optionalRow(w, "last error", d.LastError != "", d.LastError)
}
