package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// maxLineBytes bounds one record read from stdin: the server's body limit.
const maxLineBytes = 8 << 20

func runAppend(ctx context.Context, args []string, stdin io.Reader, _, stderr io.Writer) error {
	cmd := newCommand("append", "pico append NAME [--batch N] [--content-type T] [--key-separator S] < lines")
	cmd.notes = `Each line is one record; with --key-separator, the text before the first
separator is its key and the rest its body, and a line without one is an
error. With --protocol ds each line is one message: on an
application/json stream a batch goes as one JSON array of its lines (each
line must be valid JSON); other streams take one line a request (--batch 1),
without its newline, and an empty line appends nothing.
`
	batch := cmd.fs.Int("batch", 1, "lines (records) per request")
	contentType := cmd.fs.String("content-type", "", "content type of a record sent alone (--batch 1); ds: of every request (default: the stream's)")
	keySep := cmd.fs.String("key-separator", "", "split each line at the first S into a key and a body (pico only)")
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
	send, err := client.appender(ctx, name, appendOptions{contentType: *contentType, batch: *batch, keySeparator: *keySep})
	if err != nil {
		return streamError(name, err)
	}
	a := &appender{send: send, name: name, stderr: stderr}
	return a.run(ctx, newLineReader(stdin, maxLineBytes), *batch)
}

// appender sends stdin's lines as they arrive, a batch per request.
type appender struct {
	send   appendFunc
	name   string
	stderr io.Writer
}

func (a *appender) run(ctx context.Context, lines *lineReader, batch int) error {
	pending := make([][]byte, 0, min(batch, 1024))
	for {
		line, err := lines.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		pending = append(pending, line)
		if len(pending) == batch {
			if err := a.flush(ctx, pending); err != nil {
				return err
			}
			pending = pending[:0]
		}
	}
	if len(pending) > 0 {
		return a.flush(ctx, pending)
	}
	return nil
}

func (a *appender) flush(ctx context.Context, lines [][]byte) error {
	got, err := a.send(ctx, lines)
	switch {
	case err != nil:
		return streamError(a.name, err)
	case got.next == "": // nothing sent
	case got.start != "":
		fmt.Fprintf(a.stderr, "start=%s next=%s\n", got.start, got.next)
	default:
		fmt.Fprintf(a.stderr, "next=%s\n", got.next)
	}
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
