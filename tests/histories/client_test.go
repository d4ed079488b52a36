package histories

import (
	"context"
	"errors"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/ports"
	"github.com/picomq/pico/tests/linearize"
)

// opTimeout bounds one operation; past it the outcome is unknown.
const opTimeout = 2 * time.Second

// maxHops bounds the redirects one operation follows.
const maxHops = 4

var textStream = domain.StreamConfig{ContentType: "text/plain"}

// do runs in against node via's process, following redirects, and returns
// what the client learned.
func (c *cluster) do(via domain.NodeID, in linearize.Input, limit int) linearize.Output {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	for range maxHops {
		p := c.at(via)
		out, err := run(ctx, p.node.Streams(), in, limit)
		var redirect *ports.RedirectError
		if !errors.As(err, &redirect) {
			return outcome(in, out, err)
		}
		next, ok := c.nodeOf(redirect.Address)
		if !ok {
			return linearize.Output{}
		}
		via = next
	}
	return linearize.Output{}
}

// run calls the service method in names.
func run(ctx context.Context, s ports.Streams, in linearize.Input, limit int) (linearize.Output, error) {
	switch in.Kind {
	case linearize.Create:
		_, created, err := s.Create(ctx, in.Stream, textStream, nil, false)
		if err == nil && !created {
			return linearize.Output{Outcome: linearize.Exists}, nil
		}
		return linearize.Output{Outcome: linearize.OK}, err
	case linearize.Append:
		return appendTo(ctx, s, in)
	case linearize.Read:
		r, err := s.Read(ctx, in.Stream, in.From, ports.ReadLimits{Count: limit})
		out := linearize.Output{Outcome: linearize.OK, From: r.From, Next: r.Next, Closed: r.Closed}
		for _, rec := range r.Records {
			out.Bodies = append(out.Bodies, string(rec.Body))
		}
		return out, err
	case linearize.Head:
		info, err := s.Head(ctx, in.Stream)
		return linearize.Output{Outcome: linearize.OK, Next: info.Next, Start: info.Start, Closed: info.Closed}, err
	case linearize.Trim:
		start, err := s.Trim(ctx, in.Stream, in.To)
		return linearize.Output{Outcome: linearize.OK, Next: start}, err
	case linearize.Delete:
		return linearize.Output{Outcome: linearize.OK}, s.Delete(ctx, in.Stream)
	}
	panic("unknown operation " + in.Kind.String())
}

func appendTo(ctx context.Context, s ports.Streams, in linearize.Input) (linearize.Output, error) {
	req := ports.AppendRequest{Close: in.Close, MatchNext: in.Match}
	if in.Body != "" {
		req.Records = []domain.Record{{Body: []byte(in.Body)}}
	}
	if p := in.Producer; p != nil {
		req.Producer = &domain.ProducerStamp{ID: p.ID, Epoch: p.Epoch, Seq: p.Seq}
	}
	r, err := s.Append(ctx, in.Stream, req)
	out := linearize.Output{Outcome: linearize.OK, Offset: r.First, Next: r.Tail}
	if r.Duplicate {
		out.Outcome = linearize.Duplicate
	}
	return out, err
}

// refusals are the errors that settle an operation's outcome; every other
// error leaves it unknown.
var refusals = []struct {
	err     error
	outcome linearize.Outcome
}{
	{ports.ErrStreamNotFound, linearize.NotFound},
	{ports.ErrStreamClosed, linearize.Closed},
	{ports.ErrMatchFailed, linearize.MatchFailed},
	{ports.ErrProducerFenced, linearize.StaleEpoch},
	{ports.ErrProducerGap, linearize.Gap},
}

func outcome(in linearize.Input, out linearize.Output, err error) linearize.Output {
	if err == nil {
		return out
	}
	for _, r := range refusals {
		if errors.Is(err, r.err) {
			return linearize.Output{Outcome: r.outcome}
		}
	}
	if in.Kind == linearize.Read && errors.Is(err, ports.ErrBadRequest) {
		return linearize.Output{Outcome: linearize.OutOfRange}
	}
	return linearize.Output{}
}
