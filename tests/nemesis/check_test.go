package nemesis

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/picomq/pico/tests/linearize"
)

// settleFor bounds the wait for a healed cluster to answer a close or a
// read.
const settleFor = 90 * time.Second

// finalClient is the history's client index of the closing reads.
const finalClient = workers

// closeAll closes every stream of the round, each retried until its close
// is acknowledged.
func (r *round) closeAll(rnd *rand.Rand) error {
	for _, name := range r.streams {
		deadline := time.Now().Add(settleFor)
		for {
			out := r.do(finalClient, rnd, protocol(rnd.IntN(2)), linearize.Input{Stream: name, Kind: linearize.Append, Close: true})
			if out.Outcome == linearize.OK {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("closing %s: no acknowledgement within %v (last outcome %s)", name, settleFor, out.Outcome)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// readAll reads name over proto from 0 to its closed tail, page by page.
func (r *round) readAll(rnd *rand.Rand, proto protocol, name string) ([]string, error) {
	var bodies []string
	deadline := time.Now().Add(settleFor)
	for {
		out := r.do(finalClient, rnd, proto, linearize.Input{Stream: name, Kind: linearize.Read, From: uint64(len(bodies))})
		switch {
		case out.Outcome == linearize.OK:
			bodies = append(bodies, out.Bodies...)
			if out.Closed {
				return bodies, nil
			}
			if len(out.Bodies) == 0 {
				return nil, fmt.Errorf("%s read of %s: an empty page at %d that is not the closed tail", proto, name, len(bodies))
			}
		case out.Outcome != linearize.Unknown:
			return nil, fmt.Errorf("%s read of %s at %d: %s", proto, name, len(bodies), out.Outcome)
		case time.Now().After(deadline):
			return nil, fmt.Errorf("%s read of %s at %d: no answer within %v", proto, name, len(bodies), settleFor)
		default:
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// finalState checks each stream as both protocols read it once closed;
// it returns the violations, and how many acknowledged records are
// missing or misplaced.
func (r *round) finalState(rnd *rand.Rand) (violations []string, lost int) {
	for _, name := range r.streams {
		viaPico, err := r.readAll(rnd, pico, name)
		if err != nil {
			violations = append(violations, err.Error())
			continue
		}
		viaDS, err := r.readAll(rnd, ds, name)
		if err != nil {
			violations = append(violations, err.Error())
			continue
		}
		if !slices.Equal(viaPico, viaDS) {
			violations = append(violations, fmt.Sprintf("%s: Pico reads %d records %q, Durable Streams %d %q", name, len(viaPico), viaPico, len(viaDS), viaDS))
		}
		v, n := r.checkStream(name, viaPico)
		violations, lost = append(violations, v...), lost+n
	}
	return violations, lost
}

// checkStream checks one stream's records against the acknowledgements.
func (r *round) checkStream(name string, records []string) (violations []string, lost int) {
	at := map[string]int{}
	for i, b := range records {
		if j, twice := at[b]; twice {
			violations = append(violations, fmt.Sprintf("%s: record %s written twice, at %d and %d", name, b, j, i))
		}
		at[b] = i
	}
	r.mu.Lock()
	acks := slices.Clone(r.acks[name])
	r.mu.Unlock()
	for _, a := range acks {
		if i, ok := at[a.body]; !ok || uint64(i) != a.offset {
			lost++
			violations = append(violations, fmt.Sprintf("%s: record %s acknowledged at %d, read at %d (present %v)", name, a.body, a.offset, i, ok))
		}
	}
	return append(violations, producerOrder(name, acks)...), lost
}

// producerOrder checks that each producer's acknowledged records are in
// the order of their stamps.
func producerOrder(name string, acks []ack) []string {
	var violations []string
	last := map[string]ack{}
	stamped := slices.DeleteFunc(slices.Clone(acks), func(a ack) bool { return a.producer == nil })
	slices.SortFunc(stamped, func(a, b ack) int {
		return cmp.Or(cmp.Compare(a.producer.Epoch, b.producer.Epoch), cmp.Compare(a.producer.Seq, b.producer.Seq))
	})
	for _, a := range stamped {
		if prev, ok := last[a.producer.ID]; ok && prev.offset >= a.offset {
			violations = append(violations, fmt.Sprintf("%s: producer %s's %d/%d at %d, after its %d/%d at %d",
				name, a.producer.ID, a.producer.Epoch, a.producer.Seq, a.offset, prev.producer.Epoch, prev.producer.Seq, prev.offset))
		}
		last[a.producer.ID] = a
	}
	return violations
}
