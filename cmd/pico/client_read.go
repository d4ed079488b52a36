package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"time"
)

// rawNote tells what Durable Streams reads print.
const rawNote = `With --protocol ds, positions are offsets (-1 is the start, now the tail).
An application/json stream prints one message a line. Other Durable Streams
streams have no record boundaries: their bytes print as they come, each
chunk as is, with no newlines added.
`

func runRead(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cmd := newCommand("read", "pico read NAME [--from POS] [--count N] [--show-seq]")
	cmd.notes = rawNote
	from := cmd.fs.String("from", "", "first position to read: a seq, or with ds an offset (default: the stream's start)")
	count := cmd.fs.Int("count", 0, "stop after N records; 0 reads to the tail")
	showSeq := cmd.fs.Bool("show-seq", false, "prefix each record with its seq and a tab (pico only)")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	switch {
	case *count < 0:
		return cmd.usageError("--count must not be negative")
	case cmd.given("from") && !client.validPosition(*from):
		return cmd.usageError("--from " + *from + ": not a " + map[string]string{"pico": "seq", "ds": "Durable Streams offset"}[client.protocol()])
	case *showSeq && client.protocol() != "pico":
		return cmd.usageError("--show-seq is Pico-only: Durable Streams messages have no seq")
	}
	out := newRecordPrinter(stdout, *showSeq)
	_, _, err = readToTail(ctx, client, name, *from, *count, out.print)
	return streamError(name, err)
}

// errNoBoundaries is a record count asked of a stream without records.
var errNoBoundaries = errors.New("--count needs record boundaries, which only application/json streams have in Durable Streams")

// readToTail hands emit pages from position from until the tail (or limit
// records, when limit > 0) and returns the position after the last page
// and whether the stream is closed there.
func readToTail(ctx context.Context, c streamClient, name, from string, limit int, emit func(page) error) (string, bool, error) {
	printed := 0
	for {
		remaining := 0
		if limit > 0 {
			remaining = limit - printed
		}
		p, err := c.read(ctx, name, from, remaining, false)
		if err != nil {
			return from, false, err
		}
		if limit > 0 {
			if !p.framed && len(p.records) > 0 {
				return from, false, errNoBoundaries
			}
			p.records = p.records[:min(len(p.records), limit-printed)]
		}
		if err := emit(p); err != nil {
			return from, false, err
		}
		printed += len(p.records)
		if p.upToDate || (limit > 0 && printed >= limit) || p.next == from {
			return p.next, p.closed, nil
		}
		from = p.next
	}
}

func runTail(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cmd := newCommand("tail", "pico tail NAME [-f|--follow] [-n N]")
	cmd.notes = rawNote + "There -n counts messages of JSON streams and lines of other streams.\n"
	var follow bool
	cmd.fs.BoolVar(&follow, "f", false, "keep printing new records until the stream is closed")
	cmd.fs.BoolVar(&follow, "follow", false, "same as -f")
	n := cmd.fs.Uint64("n", 10, "print the last N records")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	from, err := client.tailStart(ctx, name, *n)
	if err != nil {
		return streamError(name, err)
	}
	last := &lastRecords{n: *n}
	next, closed, err := readToTail(ctx, client, name, from, 0, last.add)
	if err != nil {
		return streamError(name, err)
	}
	out := newRecordPrinter(stdout, false)
	if err := out.print(last.page()); err != nil || !follow || closed {
		return err
	}
	return followStream(ctx, client, name, next, out)
}

// lastRecords keeps the last n records of framed pages, or the last n
// lines of raw ones.
type lastRecords struct {
	n       uint64
	records []printRecord
	raw     []byte
	isRaw   bool
}

func (l *lastRecords) add(p page) error {
	if !p.framed {
		l.isRaw = true
		for _, r := range p.records {
			l.raw = lastLines(append(l.raw, r.body...), l.n)
		}
		return nil
	}
	l.records = append(l.records, p.records...)
	if drop := uint64(len(l.records)); drop > l.n {
		l.records = append(l.records[:0:0], l.records[drop-l.n:]...)
	}
	return nil
}

func (l *lastRecords) page() page {
	if l.isRaw {
		if len(l.raw) == 0 {
			return page{}
		}
		return page{records: []printRecord{{body: l.raw}}}
	}
	return page{framed: true, records: l.records}
}

// lastLines is the end of b holding its last n lines; a final "\n" ends
// the last line rather than starting another.
func lastLines(b []byte, n uint64) []byte {
	if n == 0 {
		return b[:0]
	}
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	var seen uint64
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if seen++; seen == n {
				return b[i+1:]
			}
		}
	}
	return b
}

// followStream long-polls from position from and prints until the stream
// is closed or ctx ends (an interrupt, which is a normal way to stop).
func followStream(ctx context.Context, c streamClient, name, from string, out *recordPrinter) error {
	for {
		p, err := c.read(ctx, name, from, 0, true)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return streamError(name, err)
		}
		if err := out.print(p); err != nil {
			return err
		}
		if p.closed {
			return nil
		}
		if len(p.records) == 0 {
			pause(ctx, 100*time.Millisecond) // a server answering empty pages at once must not spin us
		}
		from = p.next
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

// recordPrinter writes records to stdout: those of framed pages one per
// line, raw bytes as they are.
type recordPrinter struct {
	w       *bufio.Writer
	showSeq bool
}

func newRecordPrinter(w io.Writer, showSeq bool) *recordPrinter {
	return &recordPrinter{w: bufio.NewWriter(w), showSeq: showSeq}
}

// print writes a page and flushes it, so followers see records promptly.
func (p *recordPrinter) print(pg page) error {
	for _, r := range pg.records {
		if p.showSeq && r.seq != "" {
			p.w.WriteString(r.seq)
			p.w.WriteByte('\t')
		}
		p.w.Write(r.body)
		if pg.framed {
			p.w.WriteByte('\n')
		}
	}
	return p.w.Flush()
}
