package main

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"time"

	"github.com/picomq/pico/adapters/picoclient"
	"github.com/picomq/pico/domain"
)

func runRead(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cmd := newCommand("read", "pico read NAME [--from SEQ] [--count N] [--show-seq]")
	from := cmd.fs.Uint64("from", 0, "first seq to read (default: the stream's start)")
	count := cmd.fs.Int("count", 0, "stop after N records; 0 reads to the tail")
	showSeq := cmd.fs.Bool("show-seq", false, "prefix each record with its seq and a tab")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	if *count < 0 {
		return cmd.usageError("--count must not be negative")
	}
	seq := *from
	if !cmd.given("from") {
		// Start at the retained start: below it a read fails once trimmed.
		info, err := client.Head(ctx, name)
		if err != nil {
			return streamError(name, err)
		}
		seq = info.Start
	}
	out := newRecordPrinter(stdout, *showSeq)
	_, err = readToTail(ctx, client, name, seq, *count, out)
	return streamError(name, err)
}

// readToTail prints pages from seq until the tail (or limit records, when
// limit > 0) and returns the seq after the last page.
func readToTail(ctx context.Context, c *picoclient.Client, name string, seq uint64, limit int, out *recordPrinter) (uint64, error) {
	printed := 0
	for {
		opts := picoclient.ReadOptions{Seq: seq}
		if limit > 0 {
			opts.Count = limit - printed
		}
		page, err := c.Read(ctx, name, opts)
		if err != nil {
			return seq, err
		}
		if err := out.print(page.Records); err != nil {
			return seq, err
		}
		printed += len(page.Records)
		next := nextSeq(page)
		if page.UpToDate || (limit > 0 && printed >= limit) || next == seq {
			return next, nil
		}
		seq = next
	}
}

// nextSeq is where to read after page: its Pico-Next-Seq, and never behind
// its last record.
func nextSeq(page picoclient.Page) uint64 {
	next := page.Next
	if n := len(page.Records); n > 0 && page.Records[n-1].Seq >= next {
		next = page.Records[n-1].Seq + 1
	}
	return next
}

func runTail(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cmd := newCommand("tail", "pico tail NAME [-f|--follow] [-n N]")
	var follow bool
	cmd.fs.BoolVar(&follow, "f", false, "keep printing new records until the stream is closed")
	cmd.fs.BoolVar(&follow, "follow", false, "same as -f")
	n := cmd.fs.Uint64("n", 10, "print the last N records")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	info, err := client.Head(ctx, name)
	if err != nil {
		return streamError(name, err)
	}
	from := info.Start
	if info.Next-info.Start > *n {
		from = info.Next - *n
	}
	out := newRecordPrinter(stdout, false)
	if !follow {
		if from == info.Next {
			return nil
		}
		_, err := readToTail(ctx, client, name, from, int(info.Next-from), out)
		return streamError(name, err)
	}
	return followStream(ctx, client, name, from, out)
}

// followStream long-polls from seq and prints until the stream is closed
// or ctx ends (an interrupt, which is a normal way to stop).
func followStream(ctx context.Context, c *picoclient.Client, name string, seq uint64, out *recordPrinter) error {
	for {
		page, err := c.Read(ctx, name, picoclient.ReadOptions{Seq: seq, LongPoll: true})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return streamError(name, err)
		}
		if err := out.print(page.Records); err != nil {
			return err
		}
		if page.Closed {
			return nil
		}
		if len(page.Records) == 0 {
			pause(ctx, 100*time.Millisecond) // a server answering empty pages at once must not spin us
		}
		seq = nextSeq(page)
	}
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// recordPrinter writes record bodies to stdout, one per line.
type recordPrinter struct {
	w       *bufio.Writer
	showSeq bool
}

func newRecordPrinter(w io.Writer, showSeq bool) *recordPrinter {
	return &recordPrinter{w: bufio.NewWriter(w), showSeq: showSeq}
}

// print writes a page and flushes it, so followers see records promptly.
func (p *recordPrinter) print(records []domain.SeqRecord) error {
	for _, r := range records {
		if p.showSeq {
			p.w.WriteString(strconv.FormatUint(r.Seq, 10))
			p.w.WriteByte('\t')
		}
		p.w.Write(r.Body)
		p.w.WriteByte('\n')
	}
	return p.w.Flush()
}
