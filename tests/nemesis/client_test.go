package nemesis

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/picomq/pico/adapters/dsclient"
	"github.com/picomq/pico/adapters/dshttp"
	"github.com/picomq/pico/adapters/picoclient"
	"github.com/picomq/pico/tests/linearize"
)

// jsonType is every stream's content type: Durable Streams then reads
// messages, one per Pico record, so the two protocols compare record by
// record.
const jsonType = "application/json"

// opTimeout bounds one request; past it the outcome is unknown.
const opTimeout = 5 * time.Second

// protocol is the wire protocol an operation goes over.
type protocol uint8

const (
	pico protocol = iota
	ds
)

func (p protocol) String() string { return [...]string{"pico", "ds"}[p] }

// endpoints are one node's clients.
type endpoints struct {
	pico *picoclient.Client
	ds   *dsclient.Client
}

func endpointsOf(n *node) endpoints {
	return endpoints{pico: picoclient.New(n.picoURL(), picoclient.Options{Timeout: opTimeout}),
		ds: dsclient.New(n.dsURL(), dsclient.Options{Timeout: opTimeout})}
}

// unexpectedError is an answer no operation of the workload may get, such
// as a 409 conflict on an append of the right content type: the run fails
// on it.
type unexpectedError struct{ err error }

func (e unexpectedError) Error() string { return e.err.Error() }

// run sends in over proto and returns what the client learned, and an
// unexpectedError for an answer the model has no outcome for.
func (e endpoints) run(proto protocol, in linearize.Input) (linearize.Output, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var out linearize.Output
	var err error
	if proto == pico {
		out, err = e.runPico(ctx, in)
	} else {
		out, err = e.runDS(ctx, in)
	}
	if err == nil {
		return out, nil
	}
	o, known := refusal(proto, in.Kind, err)
	if !known {
		return linearize.Output{}, unexpectedError{fmt.Errorf("%s %s %s: %w", proto, in.Stream, in, err)}
	}
	return linearize.Output{Outcome: o}, nil
}

func (e endpoints) runPico(ctx context.Context, in linearize.Input) (linearize.Output, error) {
	c := e.pico
	switch in.Kind {
	case linearize.Create:
		r, err := c.Create(ctx, in.Stream, picoclient.CreateOptions{ContentType: jsonType})
		if err == nil && !r.Created {
			return linearize.Output{Outcome: linearize.Exists}, nil
		}
		return linearize.Output{Outcome: linearize.OK}, err
	case linearize.Append:
		opts := picoclient.AppendOptions{ContentType: jsonType, MatchSeq: in.Match, Close: in.Close}
		if p := in.Producer; p != nil {
			opts.Producer = &picoclient.ProducerStamp{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq}
		}
		var recs []picoclient.Record
		if in.Body != "" {
			recs = []picoclient.Record{{Body: []byte(in.Body)}}
		}
		r, err := c.Append(ctx, in.Stream, recs, opts)
		switch {
		case err != nil:
			return linearize.Output{}, err
		case in.Body == "":
			return linearize.Output{Outcome: linearize.OK, Offset: r.Next, Next: r.Next}, nil
		case !r.Applied:
			return linearize.Output{Outcome: linearize.Duplicate, NoOffset: true, Next: r.Next}, nil
		}
		return linearize.Output{Outcome: linearize.OK, Offset: r.Start, Next: r.Next}, nil
	case linearize.Read:
		page, err := c.ReadPage(ctx, in.Stream, picoclient.ReadOptions{Seq: in.From})
		out := linearize.Output{Outcome: linearize.OK, From: in.From, Next: page.Next, Closed: page.Closed}
		if len(page.Records) > 0 {
			out.From = page.Records[0].Seq
		}
		for _, r := range page.Records {
			out.Bodies = append(out.Bodies, string(r.Body))
		}
		return out, err
	case linearize.Head:
		info, err := c.Head(ctx, in.Stream)
		return linearize.Output{Outcome: linearize.OK, Start: info.Start, Next: info.Next, Closed: info.Closed}, err
	}
	panic("pico: no " + in.Kind.String())
}

// runDS is run over Durable Streams, which reports no record's offset: an
// append of one message is at the tail it returns less one, a read starts
// where it was asked (the workload trims nothing), and the start is 0.
func (e endpoints) runDS(ctx context.Context, in linearize.Input) (linearize.Output, error) {
	c := e.ds
	switch in.Kind {
	case linearize.Append:
		var r dsclient.AppendResult
		var err error
		if in.Body == "" {
			r, err = c.Close(ctx, in.Stream)
		} else {
			r, err = c.Append(ctx, in.Stream, jsonType, []byte(in.Body))
		}
		if err != nil {
			return linearize.Output{}, err
		}
		next, err := parseOffset(r.Next)
		if err != nil || (next == 0 && in.Body != "") {
			return linearize.Output{}, unexpectedError{fmt.Errorf("ds append to %s: tail %q", in.Stream, r.Next)}
		}
		out := linearize.Output{Outcome: linearize.OK, Offset: next, Next: next}
		if in.Body != "" {
			out.Offset = next - 1
		}
		return out, nil
	case linearize.Read:
		page, err := c.Read(ctx, in.Stream, dshttp.FormatOffset(in.From), false)
		if err != nil {
			return linearize.Output{}, err
		}
		next, err := parseOffset(page.Next)
		if err != nil {
			return linearize.Output{}, unexpectedError{err}
		}
		out := linearize.Output{Outcome: linearize.OK, From: in.From, Next: next, Closed: page.Closed}
		for _, m := range page.Messages {
			out.Bodies = append(out.Bodies, string(m))
		}
		return out, nil
	case linearize.Head:
		info, err := c.Head(ctx, in.Stream)
		if err != nil {
			return linearize.Output{}, err
		}
		next, err := parseOffset(info.Next)
		if err != nil {
			return linearize.Output{}, unexpectedError{err}
		}
		return linearize.Output{Outcome: linearize.OK, Next: next, Closed: info.Closed}, nil
	}
	panic("ds: no " + in.Kind.String())
}

// parseOffset reads the record offset of a Durable Streams offset, as
// dshttp.FormatOffset writes it.
func parseOffset(s string) (uint64, error) {
	_, seq, ok := strings.Cut(s, "_")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("offset %q is not one the server writes", s)
	}
	return n, nil
}

// refusal maps an error to an outcome; known is false for an answer the
// workload never expects.
func refusal(proto protocol, kind linearize.Kind, err error) (linearize.Outcome, bool) {
	status := 0
	var pe *picoclient.APIError
	var de *dsclient.Error
	switch {
	case errors.As(err, &pe):
		status = pe.Status
	case errors.As(err, &de):
		status = de.Status
	default:
		return linearize.Unknown, true // no answer: a timeout, a reset or refused connection
	}
	switch {
	case status >= 500:
		return linearize.Unknown, true
	case status == http.StatusNotFound:
		return linearize.NotFound, true
	case status == http.StatusBadRequest && kind == linearize.Read:
		return linearize.OutOfRange, true
	case proto == pico && kind == linearize.Append:
		for _, r := range []struct {
			err error
			out linearize.Outcome
		}{{picoclient.ErrClosed, linearize.Closed}, {picoclient.ErrSequenceGap, linearize.Gap},
			{picoclient.ErrFenced, linearize.StaleEpoch}, {picoclient.ErrMatchFailed, linearize.MatchFailed}} {
			if errors.Is(err, r.err) {
				return r.out, true
			}
		}
	case proto == ds && kind == linearize.Append && status == http.StatusConflict:
		return linearize.Closed, true
	}
	return linearize.Unknown, false
}
