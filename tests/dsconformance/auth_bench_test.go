package dsconformance

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/picoproc"
	"github.com/picomq/pico/tests/s3test"
)

// BenchmarkAuthOverhead measures, side by side in one run, 64 concurrent
// appenders of 1 KiB over the Durable Streams protocol to two picos on the
// same versitygw: one with --auth off and one with --auth required, every
// request carrying a root bearer token. It reports both appends/s and
// their ratio (auth-x-off-appends/s), and each server's CPU per append.
// The servers take turns, as in BenchmarkVersusReference, each going first
// in every other turn.
func BenchmarkAuthOverhead(b *testing.B) {
	offBucket, onBucket := s3test.URL(b), s3test.URL(b) // these set the AWS_* credentials Env passes on
	env := picoproc.Env(serverProcs(b)...)
	token := domain.FormatToken(domain.Credential{ID: "bench/root", Secret: []byte("0123456789abcdef0123456789abcdef")})
	off := startPicoIn(b, env, "sqlite:"+filepath.Join(b.TempDir(), "off.db"), "-2@"+offBucket)
	on := startPicoIn(b, env, "sqlite:"+filepath.Join(b.TempDir(), "on.db"), "-2@"+onBucket,
		"--auth", "required", "--auth-bootstrap-token", token)
	on.Token = token
	targets := []target{
		{name: "off", url: off.URL, pid: off.Cmd.Process.Pid, proc: off, usesStore: true},
		{name: "auth", url: on.URL, pid: on.Cmd.Process.Pid, proc: on, usesStore: true, token: token},
	}
	appenders := 64
	b.Run(fmt.Sprintf("appenders=%d", appenders), func(b *testing.B) {
		span := time.Duration(b.N) * time.Millisecond
		runs := []*loadRun{targets[0].prepare(b, appenders), targets[1].prepare(b, appenders)}
		// The two take turns, each going first in every other one, so
		// that neither always runs right after the other's turn.
		for slice := range 2 * spanSlices {
			first := slice % 2
			for _, r := range []*loadRun{runs[first], runs[1-first]} {
				r.run(b, span/(2*spanSlices))
				settle(b)
			}
		}
		plain, gated := runs[0].result(), runs[1].result()
		b.ReportMetric(0, "ns/op")
		plain.report(b, "off")
		gated.report(b, "auth")
		b.ReportMetric(gated.perSec/plain.perSec, "auth-x-off-appends/s")
	})
}
