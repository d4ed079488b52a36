package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/picomq/pico/adapters/picoclient"
	"github.com/picomq/pico/domain"
)

// maxLineBytes bounds one record read from stdin: the server's body limit.
const maxLineBytes = 8 << 20

func runAppend(ctx context.Context, args []string, stdin io.Reader, _, stderr io.Writer) error {
	cmd := newCommand("append", "pico append NAME [--batch N] [--content-type T] < lines")
	batch := cmd.fs.Int("batch", 1, "lines (records) per request")
	contentType := cmd.fs.String("content-type", "", "content type of a record sent alone (--batch 1)")
	name, err := cmd.parseName(args)
	if err != nil {
		return err
	}
	if *batch <= 0 {
		return cmd.usageError("--batch must be 1 or more")
	}
	client, err := cmd.client()
	if err != nil {
		return err
	}
	a := &appender{client: client, name: name, opts: picoclient.AppendOptions{ContentType: *contentType}, stderr: stderr}
	return a.run(ctx, newLineReader(stdin, maxLineBytes), *batch)
}

// appender sends stdin's lines as they arrive, a batch per request.
type appender struct {
	client *picoclient.Client
	name   string
	opts   picoclient.AppendOptions
	stderr io.Writer
}

func (a *appender) run(ctx context.Context, lines *lineReader, batch int) error {
	records := make([]domain.Record, 0, min(batch, 1024))
	for {
		line, err := lines.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		records = append(records, domain.Record{Body: line})
		if len(records) == batch {
			if err := a.send(ctx, records); err != nil {
				return err
			}
			records = records[:0]
		}
	}
	if len(records) > 0 {
		return a.send(ctx, records)
	}
	return nil
}

func (a *appender) send(ctx context.Context, records []domain.Record) error {
	got, err := a.client.Append(ctx, a.name, records, a.opts)
	if err != nil {
		return streamError(a.name, err)
	}
	fmt.Fprintf(a.stderr, "start=%d next=%d\n", got.Start, got.Next)
	return nil
}

// lineReader splits input into lines as it arrives, without a trailing
// "\n" or "\r\n", refusing lines longer than max.
type lineReader struct {
	r    *bufio.Reader
	max  int
	line int // lines read so far, for messages
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line (a copy), or io.EOF after the last one. A
// last line without "\n" still counts.
func (l *lineReader) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(line)+len(chunk) > l.max+2 { // room for the "\r\n"
			return nil, fmt.Errorf("line %d is longer than %d bytes", l.line+1, l.max)
		}
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) == 0:
			return nil, io.EOF
		case err != nil && !errors.Is(err, io.EOF):
			return nil, err
		}
		l.line++
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > l.max {
			return nil, fmt.Errorf("line %d is longer than %d bytes", l.line, l.max)
		}
		return line, nil
	}
}
