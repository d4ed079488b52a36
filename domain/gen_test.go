package domain

import (
	"math/rand/v2"

	"pgregory.net/rapid"
)

// src yields bounded integers. Both rapid draws and a seeded PRNG implement
// it, so the same generators serve property tests and long fixed-seed runs.
type src interface{ intn(n int) int }

type rapidSrc struct{ t *rapid.T }

func (s rapidSrc) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return rapid.IntRange(0, n-1).Draw(s.t, "n")
}

type prngSrc struct{ r *rand.Rand }

func (s prngSrc) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return s.r.IntN(n)
}

func newPRNG(seed uint64) prngSrc { return prngSrc{rand.New(rand.NewPCG(seed, 0x5eed))} }

// gen draws command fields from small domains, so that commands often hit
// existing entities and are often stale, duplicate or invalid.
type gen struct{ src }

var (
	genNames = []string{"", "/a", "/b", "/c", "/streams/x", "/streams/y", "/z/1", "/z/2"}
	genKeys  = []string{"", "k", "key", "/reg/a", "/reg/b", "tok"}
	genAddrs = []string{"", "n1:7000", "n2:7000", "10.0.0.9:7000"}
)

// pct is true with probability p%. Rapid favours small draws, so "true"
// is mapped to the high end: call sites use it for the rarer branch.
func (g gen) pct(p int) bool             { return g.intn(100) >= 100-p }
func (g gen) u64(n int) uint64           { return uint64(g.intn(n)) }
func (g gen) node() NodeID               { return NodeID(g.intn(5)) }
func (g gen) stream() uint64             { return g.u64(9) }
func (g gen) object() uint64             { return g.u64(41) }
func (g gen) epoch() uint64              { return g.u64(6) }
func (g gen) slots() uint32              { return uint32(g.intn(4)) }
func (g gen) ms() int64                  { return int64(g.intn(2000)) - 100 }
func (g gen) space() KVSpace             { return KVSpace(g.intn(4)) }
func (g gen) pick(xs []string) string    { return xs[g.intn(len(xs))] }
func (g gen) proposer() Proposer         { return Proposer{Node: g.node(), Epoch: g.epoch()} }
func (g gen) pickID(ids []uint64) uint64 { return ids[g.intn(len(ids))] }

// stamp is a producer stamp, or none.
func (g gen) stamp() *ProducerStamp {
	if g.pct(30) {
		return nil
	}
	return &ProducerStamp{ID: g.pick(genKeys), Epoch: g.u64(3), Seq: g.u64(5)}
}

// blob returns nil (never an empty slice, as the decoder does) or 1..4 bytes.
func (g gen) blob() []byte {
	n := g.intn(5)
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.intn(256))
	}
	return b
}

// meta is stream meta: blob bytes, or a valid configuration that may set
// an expiry or an idle TTL (what the expiring index keys on).
func (g gen) meta() []byte {
	if g.pct(50) {
		return g.blob()
	}
	return EncodeStreamConfig(StreamConfig{ContentType: "text/plain", TTLSec: g.u64(2),
		ExpiresAtMs: int64(g.intn(3)), IdleTTLSec: g.u64(2)})
}

// ids returns nil or up to max object ids.
func (g gen) ids(max int) []uint64 {
	n := g.intn(max + 1)
	if n == 0 {
		return nil
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = g.object()
	}
	return ids
}

func (g gen) rng() Range {
	start := g.u64(30)
	return Range{Stream: g.stream(), Epoch: g.epoch(), Start: start, End: start + g.u64(12)}
}

func (g gen) spec(minRanges, maxRanges int) ObjectSpec {
	o := ObjectSpec{ID: g.object(), Size: g.u64(5000)}
	if n := minRanges + g.intn(maxRanges-minRanges+1); n > 0 {
		o.Ranges = make([]Range, n)
		for i := range o.Ranges {
			o.Ranges[i] = g.rng()
		}
	}
	return o
}

// command returns a random command of type c (nil for an unknown code).
func (g gen) command(c Code) Command {
	switch c {
	case CodeRegisterNode:
		return &RegisterNode{Node: g.node(), Epoch: g.epoch(), Address: g.pick(genAddrs), Slots: g.slots(), NowMs: g.ms()}
	case CodeSetSlots:
		return &SetSlots{By: g.proposer(), Node: g.node(), Slots: g.slots()}
	case CodeCreateStream:
		return &CreateStream{By: g.proposer(), Name: g.pick(genNames), Meta: g.meta(), Open: g.pct(50), NowMs: g.ms()}
	case CodePlaceStream:
		return &PlaceStream{By: g.proposer(), Name: g.pick(genNames), Meta: g.meta(), Content: g.pct(50), NowMs: g.ms()}
	case CodeCreateFork:
		return &CreateFork{By: g.proposer(), Name: g.pick(genNames), Meta: g.meta(), Source: g.stream(), At: g.u64(30), NowMs: g.ms()}
	case CodeOpenStream:
		return &OpenStream{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch()}
	case CodeCloseStream:
		return &CloseStream{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch()}
	case CodeSetStreamMeta:
		return &SetStreamMeta{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch(), Meta: g.meta()}
	case CodeTrimStream:
		return &TrimStream{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch(), Start: g.u64(40), KeepLast: g.intn(2) == 0}
	case CodeDeleteStream:
		return &DeleteStream{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch()}
	case CodeReserveObjects:
		return &ReserveObjects{By: g.proposer(), Count: uint32(g.intn(5)), TTLMs: g.ms(), NowMs: g.ms()}
	case CodeCommitObjects:
		c := &CommitObjects{By: g.proposer(), NowMs: g.ms()}
		if n := g.intn(3); n > 0 {
			c.Objects = make([]ObjectSpec, n)
			for i := range c.Objects {
				c.Objects[i] = g.spec(0, 3)
			}
		}
		return c
	case CodeCompactObjects:
		return &CompactObjects{By: g.proposer(), Object: g.spec(0, 2), Replaces: g.ids(3), NowMs: g.ms()}
	case CodeStartTransfer:
		return &StartTransfer{By: g.proposer(), Stream: g.stream(), To: g.node()}
	case CodeCompleteTransfer:
		return &CompleteTransfer{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch()}
	case CodeExpireReservations:
		return &ExpireReservations{By: g.proposer(), NowMs: g.ms()}
	case CodeDestroyObjects:
		return &DestroyObjects{By: g.proposer(), IDs: g.ids(4)}
	case CodePutKV:
		return &PutKV{By: g.proposer(), Space: g.space(), Key: g.pick(genKeys), Value: g.blob()}
	case CodePutKVIf:
		return &PutKVIf{By: g.proposer(), Space: g.space(), Key: g.pick(genKeys), Value: g.blob(), IfRev: g.u64(12)}
	case CodeDeleteKV:
		return &DeleteKV{By: g.proposer(), Space: g.space(), Key: g.pick(genKeys)}
	case CodeDeleteKVIf:
		return &DeleteKVIf{By: g.proposer(), Space: g.space(), Key: g.pick(genKeys), IfRev: g.u64(12)}
	case CodeSealStream:
		return &SealStream{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch()}
	case CodeSealStreamBy:
		return &SealStreamBy{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch(), Closer: g.stamp()}
	case CodeRecoveredStream:
		return &RecoveredStream{By: g.proposer(), Stream: g.stream(), Epoch: g.epoch()}
	case CodeFenceNode:
		return &FenceNode{By: g.proposer(), Node: g.node(), Epoch: g.epoch()}
	}
	return nil
}

func (g gen) code() Code {
	codes := AllCodes()
	return codes[g.intn(len(codes))]
}

// busyCode favours the commands that build up streams and objects.
func (g gen) busyCode() Code {
	if g.pct(50) {
		busy := []Code{CodeCreateStream, CodePlaceStream, CodeOpenStream, CodeReserveObjects, CodeCommitObjects,
			CodeCommitObjects, CodeCompactObjects, CodeTrimStream}
		return busy[g.intn(len(busy))]
	}
	return g.code()
}

// commandGen is the rapid generator of random commands of type c.
func commandGen(c Code) *rapid.Generator[Command] {
	return rapid.Custom(func(t *rapid.T) Command { return gen{rapidSrc{t}}.command(c) })
}

// anyCommandGen draws a command of any type.
func anyCommandGen() *rapid.Generator[Command] {
	return rapid.Custom(func(t *rapid.T) Command {
		g := gen{rapidSrc{t}}
		return g.command(g.code())
	})
}
