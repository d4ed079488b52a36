package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
)

func runCreate(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	cmd := newCommand("create", "pico create NAME [--content-type T] [--ttl S | --expires-at T] [--retention S] [--closed]")
	var opts createOptions
	cmd.fs.StringVar(&opts.contentType, "content-type", "application/octet-stream", "content type of the stream's records")
	cmd.fs.Uint64Var(&opts.ttlSec, "ttl", 0, "seconds: the stream expires this long after its last read or write (see below)")
	cmd.fs.Uint64Var(&opts.retentionSec, "retention", 0, "seconds: records older than this are trimmed (pico only)")
	cmd.notes = ttlNotes
	cmd.fs.StringVar(&opts.expiresAt, "expires-at", "", "delete the stream at this time (RFC 3339, or unix ms with pico)")
	cmd.fs.BoolVar(&opts.closed, "closed", false, "create the stream closed")
	name, err := cmd.parseName(args)
	if err != nil {
		return err
	}
	if opts.ttlSec > 0 && opts.expiresAt != "" {
		return cmd.usageError("--ttl and --expires-at exclude each other")
	}
	client, err := cmd.client()
	if err != nil {
		return err
	}
	created, next, err := client.create(ctx, name, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "created=%t next=%s\n", created, next)
	return nil
}

// ttlNotes says what --ttl and --retention mean: both protocols mean the
// same by a TTL.
const ttlNotes = `--ttl S is the stream's idle lifetime on both protocols (Pico-TTL,
  Stream-TTL): the stream expires S seconds after its last read or write,
  and is deleted.
--retention S is record retention (Pico-Retention, pico only): records older
  than S seconds are trimmed in the background; the stream stays.
`

func runHead(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cmd := newCommand("head", "pico head NAME")
	cmd.notes = "With --protocol ds, next is an offset and there is no start.\n"
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	info, err := client.head(ctx, name)
	if err != nil {
		return streamError(name, err)
	}
	if info.start != "" {
		fmt.Fprintf(stdout, "start=%s ", info.start)
	}
	fmt.Fprintf(stdout, "next=%s closed=%t type=%s", info.next, info.closed, info.contentType)
	if info.ttlSec > 0 {
		fmt.Fprintf(stdout, " ttl=%d", info.ttlSec)
	}
	if info.retentionSec > 0 {
		fmt.Fprintf(stdout, " retention=%d", info.retentionSec)
	}
	if info.expiresAt != "" {
		fmt.Fprintf(stdout, " expires_at=%s", info.expiresAt)
	}
	fmt.Fprintln(stdout)
	return nil
}

func runList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	cmd := newCommand("ls", "pico ls [--prefix P] [--limit N]")
	cmd.notes = "Pico only: Durable Streams has no stream listing.\n"
	prefix := cmd.fs.String("prefix", "", "only streams whose names start with P")
	limit := cmd.fs.Int("limit", 0, "list one page of at most N streams; 0 lists them all")
	if _, err := cmd.parse(args, 0, 0); err != nil {
		return err
	}
	if *limit < 0 {
		return cmd.usageError("--limit must not be negative")
	}
	client, err := cmd.picoClient("Durable Streams has no stream listing")
	if err != nil {
		return err
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	for after := ""; ; {
		page, err := client.List(ctx, *prefix, after, *limit)
		if err != nil {
			return err
		}
		for _, s := range page.Streams {
			fmt.Fprintf(out, "%s start=%d next=%d closed=%t\n", s.Name, s.Start, s.Next, s.Closed)
		}
		if *limit > 0 && page.HasMore {
			fmt.Fprintf(stderr, "more streams after %s; raise --limit or drop it\n", page.Streams[len(page.Streams)-1].Name)
		}
		if *limit > 0 || !page.HasMore || len(page.Streams) == 0 {
			return nil
		}
		after = page.Streams[len(page.Streams)-1].Name
	}
}

func runTrim(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	cmd := newCommand("trim", "pico trim NAME --seq N")
	cmd.notes = "Pico only: Durable Streams has no trim.\n"
	seq := cmd.fs.Uint64("seq", 0, "drop the records before this seq (required)")
	name, err := cmd.parseName(args)
	if err != nil {
		return err
	}
	if !cmd.given("seq") {
		return cmd.usageError("--seq is required")
	}
	client, err := cmd.picoClient("Durable Streams has no trim")
	if err != nil {
		return err
	}
	start, err := client.Trim(ctx, name, *seq)
	if err != nil {
		return streamError(name, err)
	}
	fmt.Fprintf(stderr, "trimmed start=%d\n", start)
	return nil
}

func runClose(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	cmd := newCommand("close", "pico close NAME")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	next, err := client.close(ctx, name)
	if err != nil {
		return streamError(name, err)
	}
	fmt.Fprintf(stderr, "closed next=%s\n", next)
	return nil
}

func runDelete(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	cmd := newCommand("delete", "pico delete NAME")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	if err := client.delete(ctx, name); err != nil {
		return streamError(name, err)
	}
	fmt.Fprintln(stderr, "deleted=true")
	return nil
}

// parseStreamVerb parses a verb taking one stream name and returns the
// name with a client for the resolved settings.
func (c *command) parseStreamVerb(args []string) (string, streamClient, error) {
	name, err := c.parseName(args)
	if err != nil {
		return "", nil, err
	}
	client, err := c.client()
	return name, client, err
}

// streamError says "not found: NAME" for a missing stream, keeping the
// server's answer underneath for the exit code.
func streamError(name string, err error) error {
	if notFound(err) {
		return &missingStream{name: name, answer: err}
	}
	return err
}

type missingStream struct {
	name   string
	answer error
}

func (e *missingStream) Error() string { return "not found: " + e.name }
func (e *missingStream) Unwrap() error { return e.answer }
