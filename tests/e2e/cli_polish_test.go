package e2e

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/picomq/pico/tests/picoproc"
)

// TestCLIHelpGoesToStdout: help asked for is data (pico help | less
// works) and exits 0; a mistake is one line on stderr naming the nearest
// command or flag, and exits 2.
func TestCLIHelpGoesToStdout(t *testing.T) {
	env := clientEnv(t, "http://"+closedAddr(t))
	for _, args := range [][]string{{"help"}, {"-h"}, {"serve", "-h"}, {"serve", "--help"}, {"help", "serve"}, {"create", "-h"}, {"admin", "-h"}, {"help", "read"}, {"help", "probe"}, {"probe", "-h"}} {
		r := runPico(t, env, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "usage: pico") || r.stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want the help on stdout", r.args, r.code, clipText(r.stdout), r.stderr)
		}
	}
	if r := runPico(t, env, "", "help"); !strings.Contains(r.stdout, "exit codes:") {
		t.Errorf("pico help lists no exit codes:\n%s", r.stdout)
	}
	if r := runPico(t, env, "", "serve", "-h"); !strings.Contains(r.stdout, "ID@") {
		t.Errorf("pico serve -h does not explain --storage's ID@:\n%s", r.stdout)
	}
	runPico(t, env, "", "craete", "/s").wantFailure(t, 2, `unknown command "craete" (did you mean create?)`)
	runPico(t, env, "", "prob").wantFailure(t, 2, `unknown command "prob" (did you mean probe?)`)
	runPico(t, env, "", "create", "/s", "--ttll", "1").wantFailure(t, 2, "unknown flag --ttll (did you mean --ttl?)")
	r := runPico(t, env, "", "serve", "--lisen", "x")
	if r.code != 2 || !strings.Contains(r.stderr, "did you mean --listen?") || strings.Count(r.stderr, "\n") > 2 {
		t.Errorf("serve with a wrong flag: %+v", r)
	}
	if r := runPico(t, env, "", "create", "-h"); !strings.Contains(r.stdout, "record retention") || !strings.Contains(r.stdout, "Stream-TTL") ||
		!strings.Contains(r.stdout, "Pico-TTL") {
		t.Errorf("create -h does not say what --ttl and --retention mean:\n%s", r.stdout)
	}
}

func TestCLIVersion(t *testing.T) {
	r := runPico(t, nil, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "pico ") || !strings.Contains(r.stdout, " go1.") {
		t.Fatalf("pico version: %+v", r)
	}
}

// TestCLIErrorsSayWhatToDo: a server that is down, and a server of the
// other protocol, are named for what they are.
func TestCLIErrorsSayWhatToDo(t *testing.T) {
	dead := "http://" + closedAddr(t)
	runPico(t, clientEnv(t, dead), "", "head", "/s").wantFailure(t, 1,
		"cannot reach "+dead+": connection refused (is pico serve running? --endpoint or PICO_ENDPOINT names the server)")

	pico, ds := startBothProtocols(t)
	runPico(t, clientEnv(t, pico), "", "create", "/m", "--content-type", "text/plain").want(t, 0, "")
	runPico(t, clientEnv(t, pico), "", "--protocol", "ds", "read", "/m").wantFailure(t, 2,
		"speaks the Pico protocol, not Durable Streams: use --protocol pico")
	runPico(t, clientEnv(t, ds), "", "head", "/m").wantFailure(t, 2,
		"speaks the Durable Streams protocol, not Pico: use --protocol ds")
}

// TestServeBannerAndWarnings: --no-admin says the admin listener is off
// (not "admin on off"), and a wildcard bind without --http-address warns
// that the advertised address is unreachable.
func TestServeBannerAndWarnings(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr := serveBriefly(t, "--listen", "0.0.0.0:0", "--insecure-allow-remote", "--no-admin",
		"--meta-url", "sqlite:"+filepath.Join(dir, "meta.db"), "--storage", "file://"+filepath.Join(dir, "objects"))
	if strings.Contains(stdout, "admin on") || !strings.Contains(stdout, "admin listener off") {
		t.Errorf("--no-admin banner:\n%s", stdout)
	}
	if !strings.Contains(stderr, "set --http-address") {
		t.Errorf("no warning about the wildcard advertised address:\n%s", stderr)
	}
}

// serveBriefly runs pico serve until its banner is out, then stops it.
func serveBriefly(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(picoproc.Binary(t), append([]string{"serve"}, args...)...)
	cmd.Env = picoproc.Env()
	var out, errOut picoproc.Output
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(out.String(), "serving on") && strings.Count(out.String(), "\n") >= 2 {
			return out.String(), errOut.String()
		}
	}
	t.Fatalf("no banner in 20s\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	return "", ""
}

// TestRequestIDAndLog: every listener echoes a sane X-Request-Id (or
// makes one), and at debug level logs one JSON line per request without
// the credential.
func TestRequestIDAndLog(t *testing.T) {
	n := startNode(t, nodeConfig{dataDir: t.TempDir(), flags: []string{"--log-level", "debug", "--log-format", "json"}})
	for _, url := range []string{n.URL + "/rid/s", n.AdminURL + "/admin/cluster"} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("X-Request-Id", "rid-7")
		req.Header.Set("Authorization", "Bearer not-a-real-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Request-Id"); got != "rid-7" {
			t.Errorf("%s: X-Request-Id %q, want the client's", url, got)
		}
		resp, err = http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no request id made", url)
		}
	}
	logs := n.Stderr.String()
	for _, want := range []string{`"msg":"request","id":"rid-7","method":"GET","route":"/{stream}","path":"/rid/s","status":404`, `"route":"/admin/cluster"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s:\n%s", want, clipText(logs))
		}
	}
	if strings.Contains(logs, "not-a-real-secret") {
		t.Error("the log carries the credential")
	}
}
