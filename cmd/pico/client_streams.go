package main

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/picomq/pico/adapters/picoclient"
)

func runCreate(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	cmd := newCommand("create", "pico create NAME [--content-type T] [--ttl S | --expires-at T] [--closed]")
	var opts picoclient.CreateOptions
	cmd.fs.StringVar(&opts.ContentType, "content-type", "application/octet-stream", "content type of the stream's records")
	cmd.fs.Uint64Var(&opts.TTLSec, "ttl", 0, "delete the stream this many seconds after its last write")
	cmd.fs.StringVar(&opts.ExpiresAt, "expires-at", "", "delete the stream at this time (RFC 3339 or unix ms)")
	cmd.fs.BoolVar(&opts.Closed, "closed", false, "create the stream closed")
	name, err := cmd.parseName(args)
	if err != nil {
		return err
	}
	if opts.TTLSec > 0 && opts.ExpiresAt != "" {
		return cmd.usageError("--ttl and --expires-at exclude each other")
	}
	client, err := cmd.client()
	if err != nil {
		return err
	}
	got, err := client.Create(ctx, name, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "created=%t next=%d\n", got.Created, got.Next)
	return nil
}

func runHead(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cmd := newCommand("head", "pico head NAME")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	info, err := client.Head(ctx, name)
	if err != nil {
		return streamError(name, err)
	}
	fmt.Fprintf(stdout, "start=%d next=%d closed=%t type=%s", info.Start, info.Next, info.Closed, info.ContentType)
	if info.TTLSec > 0 {
		fmt.Fprintf(stdout, " ttl=%d", info.TTLSec)
	}
	if info.ExpiresAt != "" {
		fmt.Fprintf(stdout, " expires_at=%s", info.ExpiresAt)
	}
	fmt.Fprintln(stdout)
	return nil
}

func runList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	cmd := newCommand("ls", "pico ls [--prefix P] [--limit N]")
	prefix := cmd.fs.String("prefix", "", "only streams whose names start with P")
	limit := cmd.fs.Int("limit", 0, "list one page of at most N streams; 0 lists them all")
	if _, err := cmd.parse(args, 0, 0); err != nil {
		return err
	}
	if *limit < 0 {
		return cmd.usageError("--limit must not be negative")
	}
	client, err := cmd.client()
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
	seq := cmd.fs.Uint64("seq", 0, "drop the records before this seq (required)")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	if !cmd.given("seq") {
		return cmd.usageError("--seq is required")
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
	got, err := client.Close(ctx, name)
	if err != nil {
		return streamError(name, err)
	}
	fmt.Fprintf(stderr, "closed next=%d\n", got.Next)
	return nil
}

func runDelete(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	cmd := newCommand("delete", "pico delete NAME")
	name, client, err := cmd.parseStreamVerb(args)
	if err != nil {
		return err
	}
	if err := client.Delete(ctx, name); err != nil {
		return streamError(name, err)
	}
	fmt.Fprintln(stderr, "deleted=true")
	return nil
}

// parseStreamVerb parses a verb taking one stream name and returns the
// name with a client for the resolved settings.
func (c *command) parseStreamVerb(args []string) (string, *picoclient.Client, error) {
	name, err := c.parseName(args)
	if err != nil {
		return "", nil, err
	}
	client, err := c.client()
	return name, client, err
}

// streamError says "not found: NAME" for a missing stream.
func streamError(name string, err error) error {
	if picoclient.NotFound(err) {
		return fmt.Errorf("not found: %s", name)
	}
	return err
}
