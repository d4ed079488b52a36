package nemesis

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/picomq/pico/tests/linearize"
)

// workers is how many clients run at once.
const workers = 6

// thinkTime is a client's least pause between operations; it adds up to as
// much again at random. It keeps a round's history small enough for the
// search to decide: what a round proves comes from its faults, not from
// its rate.
const thinkTime = 20 * time.Millisecond

// round is one round's streams, history and what its clients were told.
type round struct {
	c       *cluster
	ends    map[int]endpoints // by node id
	streams []string
	h       *linearize.History

	mu         sync.Mutex
	acks       map[string][]ack // by stream
	unexpected []string
}

// ack is an append the server acknowledged as written.
type ack struct {
	body     string
	offset   uint64
	producer *linearize.Stamp
}

func newRound(c *cluster, ends map[int]endpoints, index, streams int) *round {
	r := &round{c: c, ends: ends, h: linearize.NewHistory(), acks: map[string][]ack{}}
	for i := range streams {
		r.streams = append(r.streams, fmt.Sprintf("/nemesis/r%d/s%d", index, i))
	}
	return r
}

// do runs in over proto through a node drawn from the live ones, and
// records it.
func (r *round) do(client int, rnd *rand.Rand, proto protocol, in linearize.Input) linearize.Output {
	live := r.c.live()
	if len(live) == 0 {
		time.Sleep(100 * time.Millisecond)
		return linearize.Output{}
	}
	n := live[rnd.IntN(len(live))]
	call := r.h.Begin(client, in)
	out, err := r.ends[n.id].run(proto, in)
	call.End(out)
	var unexpected unexpectedError
	if errors.As(err, &unexpected) {
		r.mu.Lock()
		r.unexpected = append(r.unexpected, err.Error())
		r.mu.Unlock()
	}
	if in.Kind == linearize.Append && out.Outcome == linearize.OK && in.Body != "" {
		r.mu.Lock()
		r.acks[in.Stream] = append(r.acks[in.Stream], ack{body: in.Body, offset: out.Offset, producer: in.Producer})
		r.mu.Unlock()
	}
	return out
}

// client is one worker's state: its producers and what it knows of each
// stream's tail, so that its reads and matches are mostly in range.
type client struct {
	id     int
	r      *round
	rnd    *rand.Rand
	bodies int
	// producers by stream: the stamp of the next request, and its body
	// while its outcome is unknown (a retry sends the same).
	producers map[string]*pending
	tails     map[string]uint64
}

type pending struct {
	stamp linearize.Stamp
	body  string
}

func newClient(r *round, id int, seed uint64) *client {
	return &client{id: id, r: r, rnd: rand.New(rand.NewPCG(seed, uint64(id))), producers: map[string]*pending{},
		tails: map[string]uint64{}}
}

func (c *client) body() string {
	c.bodies++
	return fmt.Sprintf("%q", fmt.Sprintf("c%d-%d", c.id, c.bodies))
}

// runUntil issues operations until stop is closed.
func (c *client) runUntil(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(thinkTime + time.Duration(c.rnd.Int64N(int64(thinkTime)))):
		}
		c.step()
	}
}

// step issues one operation drawn at random.
func (c *client) step() {
	name := c.r.streams[c.rnd.IntN(len(c.r.streams))]
	x := c.rnd.IntN(100)
	switch {
	case x < 30:
		c.produce(name)
	case x < 45:
		in := linearize.Input{Stream: name, Kind: linearize.Append, Body: c.body()}
		if c.rnd.IntN(2) == 0 {
			tail := c.tails[name]
			in.Match = &tail
		}
		c.learn(name, c.r.do(c.id, c.rnd, pico, in))
	case x < 60:
		c.learn(name, c.r.do(c.id, c.rnd, ds, linearize.Input{Stream: name, Kind: linearize.Append, Body: c.body()}))
	case x < 85:
		from := uint64(0)
		if t := c.tails[name]; t > 0 {
			from = c.rnd.Uint64N(t + 1)
		}
		c.learn(name, c.r.do(c.id, c.rnd, protocol(c.rnd.IntN(2)), linearize.Input{Stream: name, Kind: linearize.Read, From: from}))
	default:
		c.learn(name, c.r.do(c.id, c.rnd, protocol(c.rnd.IntN(2)), linearize.Input{Stream: name, Kind: linearize.Head}))
	}
}

// produce sends the producer's next request on name, or retries the one
// whose outcome it does not know.
func (c *client) produce(name string) {
	p := c.producers[name]
	if p == nil {
		p = &pending{stamp: linearize.Stamp{ID: fmt.Sprintf("p%d", c.id)}}
		c.producers[name] = p
	}
	if p.body == "" {
		p.body = c.body()
	}
	stamp := p.stamp
	out := c.r.do(c.id, c.rnd, pico, linearize.Input{Stream: name, Kind: linearize.Append, Body: p.body, Producer: &stamp})
	c.learn(name, out)
	switch out.Outcome {
	case linearize.Unknown:
	case linearize.OK, linearize.Duplicate:
		p.stamp.Seq++
		p.body = ""
	default: // a gap or fence the model judges: start over at a new epoch
		p.stamp.Epoch++
		p.stamp.Seq = 0
		p.body = ""
	}
}

func (c *client) learn(name string, out linearize.Output) {
	if out.Outcome == linearize.OK {
		c.tails[name] = max(c.tails[name], out.Next)
	}
}
