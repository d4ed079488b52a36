package domain

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// harness applies commands to a State and checks every step against the
// model and the general properties of Apply.
type harness struct {
	s     State
	m     *model
	now   int64
	ok    map[Code]int
	tried map[Code]int
	past  []Command // recent commands, for retries
}

func newHarness() *harness {
	return &harness{s: NewState(), m: newModel(), ok: map[Code]int{}, tried: map[Code]int{}}
}

func describe(c Command) string { return fmt.Sprintf("%T%+v", c, c) }

// apply applies c and verifies: a rejected command changes nothing but
// Applied, the previous version is untouched, nothing goes backwards, and the
// model agrees.
func (h *harness) apply(c Command) (Result, error) {
	pre := h.s
	pre.Applied++
	want := EncodeState(&pre)
	r := h.s.Apply(c)
	if h.past = append(h.past, c); len(h.past) > 64 {
		h.past = h.past[1:]
	}
	h.tried[c.Code()]++
	if r.Code == ResultOK {
		h.ok[c.Code()]++
	} else if got := EncodeState(&h.s); !bytes.Equal(got, want) {
		return r, fmt.Errorf("rejected (%v) but changed the state", r)
	}
	if !bytes.Equal(EncodeState(&pre), want) {
		return r, fmt.Errorf("Apply modified the previous state version")
	}
	if err := monotonic(&pre, &h.s); err != nil {
		return r, err
	}
	if err := h.m.apply(c, r); err != nil {
		return r, fmt.Errorf("model: %w", err)
	}
	return r, nil
}

func (h *harness) check() error {
	if err := h.s.CheckInvariants(); err != nil {
		return fmt.Errorf("invariant: %w", err)
	}
	return h.m.compare(&h.s)
}

func (h *harness) planner(s src) *planner { return &planner{gen: gen{s}, s: &h.s, now: h.now} }

// preamble registers three nodes, opens streams and reserves ids, so that
// short runs reach the interesting commands.
func (h *harness) preamble() error {
	for _, c := range preambleCmds() {
		if r, err := h.apply(c); err != nil || r.Code != ResultOK {
			return fmt.Errorf("preamble %s: %v %v", describe(c), r, err)
		}
	}
	return h.check()
}

func preambleCmds() []Command {
	return []Command{
		&RegisterNode{Node: 1, Epoch: 1, Address: "n1:7000", Slots: 2},
		&RegisterNode{Node: 2, Epoch: 1, Address: "n2:7000", Slots: 2},
		&RegisterNode{Node: 3, Epoch: 1, Address: "10.0.0.9:7000", Slots: 1},
		&CreateStream{By: p1, Name: "/a", Open: true},
		&CreateStream{By: p1, Name: "/b", Open: true},
		&CreateStream{By: p2, Name: "/c", Open: true},
		&ReserveObjects{By: p1, Count: 4, TTLMs: 1000},
		&ReserveObjects{By: p2, Count: 2, TTLMs: 1000},
	}
}

// step plans one command of type code with s, applies and checks it.
func (h *harness) step(s src, code Code) error {
	g := gen{s}
	h.now += int64(g.intn(20))
	c := h.planner(s).command(code)
	if _, err := h.apply(c); err != nil {
		return fmt.Errorf("%s: %w", describe(c), err)
	}
	return nil
}

// retry applies a recent command again, as a proposer retrying would.
func (h *harness) retry(s src) error {
	if len(h.past) == 0 {
		return h.step(s, gen{s}.code())
	}
	c := h.past[len(h.past)-1-s.intn(len(h.past))]
	if _, err := h.apply(c); err != nil {
		return fmt.Errorf("retry %s: %w", describe(c), err)
	}
	return nil
}

func typeName(c Code) string { return reflect.TypeOf(NewCommand(c)).Elem().Name() }

func TestApplyStateMachine(t *testing.T) {
	ok, tried := map[Code]int{}, map[Code]int{}
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness()
		if !(gen{rapidSrc{rt}}).pct(15) {
			if err := h.preamble(); err != nil {
				rt.Fatal(err)
			}
		}
		actions := map[string]func(*rapid.T){"": func(rt *rapid.T) {
			if err := h.check(); err != nil {
				rt.Fatal(err)
			}
		}}
		for _, code := range AllCodes() {
			actions[typeName(code)] = func(rt *rapid.T) {
				if err := h.step(rapidSrc{rt}, code); err != nil {
					rt.Fatal(err)
				}
			}
		}
		actions["Retry"] = func(rt *rapid.T) {
			if err := h.retry(rapidSrc{rt}); err != nil {
				rt.Fatal(err)
			}
		}
		rt.Repeat(actions)
		for c := range h.tried {
			ok[c] += h.ok[c]
			tried[c] += h.tried[c]
		}
	})
	t.Log(okSummary(ok, tried))
}

// TestApplyLongRun drives the same checks with fixed seeds over long
// sequences and requires every command type to succeed at least once.
func TestApplyLongRun(t *testing.T) {
	seeds, steps := 8, 4000
	if testing.Short() {
		seeds = 2
	}
	ok, tried := map[Code]int{}, map[Code]int{}
	for seed := range seeds {
		h := newHarness()
		s := newPRNG(uint64(seed))
		if seed%2 == 0 {
			if err := h.preamble(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range steps {
			step := func() error { return h.step(s, gen{s}.busyCode()) }
			if (gen{s}).pct(5) {
				step = func() error { return h.retry(s) }
			}
			if err := step(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, i, err)
			}
			if err := h.check(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, i, err)
			}
		}
		for c := range h.tried {
			ok[c] += h.ok[c]
			tried[c] += h.tried[c]
		}
	}
	t.Log(okSummary(ok, tried))
	for _, c := range AllCodes() {
		if ok[c] == 0 {
			t.Errorf("%s never succeeded in %d attempts", typeName(c), tried[c])
		}
	}
}

func okSummary(ok, tried map[Code]int) string {
	var b strings.Builder
	b.WriteString("ResultOK/attempts per command:")
	for _, c := range AllCodes() {
		fmt.Fprintf(&b, " %s=%d/%d", typeName(c), ok[c], tried[c])
	}
	return b.String()
}
