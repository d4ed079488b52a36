package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/picomq/pico/adapters/httpguard"
)

// autoCount is a count flag that may be "auto": derived from the
// open-file limit at start.
type autoCount struct {
	n    uint64
	auto bool
}

func (a *autoCount) String() string {
	if a == nil || a.auto {
		return "auto"
	}
	return strconv.FormatUint(a.n, 10)
}

func (a *autoCount) Set(v string) error {
	if v == "auto" {
		*a = autoCount{auto: true}
		return nil
	}
	n, err := strconv.ParseUint(v, 10, 31)
	if err != nil {
		return fmt.Errorf("want auto or a count: %w", err)
	}
	*a = autoCount{n: n}
	return nil
}

// guardFlags are the connection-hygiene flags of pico serve.
type guardFlags struct {
	minBodyRate  uint64
	minBodyGrace time.Duration
	readIdle     time.Duration
	idleTimeout  time.Duration
	maxConns     autoCount
	maxLive      autoCount
	catchUpShare float64
	catchUpRate  uint64
}

// connsShare is the share of the open-file limit --max-connections auto
// gives connections; the rest is for stores, the metadata log, the admin
// listener and refusals.
const connsShare = 0.8

// caps resolves the connection and live-reader caps (0: none) for an
// open-file limit (0: unknown). Live readers get half the connections by
// default, so that parked reads cannot take every one from appends.
func (g *guardFlags) caps(fileLimit uint64) (conns, live int) {
	conns = int(g.maxConns.n)
	if g.maxConns.auto {
		conns = int(float64(min(fileLimit, 1<<30)) * connsShare)
	}
	live = int(g.maxLive.n)
	if g.maxLive.auto {
		live = conns / 2
	}
	return conns, live
}

func (g *guardFlags) catchUpLimits() httpguard.CatchUpLimits {
	return httpguard.CatchUpLimits{Share: g.catchUpShare, BytesPerSecond: int64(min(g.catchUpRate, 1<<62))}
}

func (g *guardFlags) bodyLimits() httpguard.BodyLimits {
	return httpguard.BodyLimits{MinRate: float64(g.minBodyRate), Grace: g.minBodyGrace, Idle: g.readIdle}
}

func (g *guardFlags) validate() error {
	if g.minBodyGrace < 0 || g.readIdle < 0 || g.idleTimeout < 0 {
		return fmt.Errorf("--min-body-rate-grace, --read-idle-timeout and --idle-timeout must not be negative")
	}
	if !(g.catchUpShare > 0 && g.catchUpShare <= 1) {
		return fmt.Errorf("--catchup-share must be above 0 and at most 1, got %v", g.catchUpShare)
	}
	return nil
}

func (g *guardFlags) guardFlagSet(fs *flag.FlagSet) {
	fs.Uint64Var(&g.minBodyRate, "min-body-rate", 1024, "cut off with 408 a request body arriving slower than this many bytes/s on average, after --min-body-rate-grace (0: off)")
	fs.DurationVar(&g.minBodyGrace, "min-body-rate-grace", 5*time.Second, "time a request body has before --min-body-rate applies")
	fs.DurationVar(&g.readIdle, "read-idle-timeout", 10*time.Second, "cut off with 408 a request body that sends nothing for this long (0: off)")
	fs.DurationVar(&g.idleTimeout, "idle-timeout", 60*time.Second, "close a keep-alive connection idle this long (0: never)")
	g.maxConns, g.maxLive = autoCount{auto: true}, autoCount{auto: true}
	fs.Var(&g.maxConns, "max-connections", "open connections of the protocol listeners beyond which new ones get 503 (auto: 80% of the open-file limit; 0: no cap)")
	fs.Float64Var(&g.catchUpShare, "catchup-share", httpguard.DefaultCatchUpShare, "share of the CPUs that catch-up reads (pages short of a stream's tail) may use while appends run; they use all of them otherwise (1: appends get no priority)")
	fs.Uint64Var(&g.catchUpRate, "catchup-bytes-per-second", 0, "bound on the bytes per second catch-up reads are served, appends or not (0: none)")
	fs.Var(&g.maxLive, "max-live-readers", "long-polls and event streams parked at once beyond which new ones get 503 (auto: half of --max-connections; 0: no cap)")
}
