package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/picomq/pico/domain"
	"github.com/picomq/pico/tests/picoproc"
)

// serveRefused runs `pico serve args...`, which must exit non-zero by
// itself, with each fragment in its stderr.
func serveRefused(t *testing.T, args []string, fragments ...string) {
	t.Helper()
	serveRefusedIn(t, nil, args, fragments...)
}

// serveRefusedIn is serveRefused with extra environment.
func serveRefusedIn(t *testing.T, env, args []string, fragments ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, picoproc.Binary(t), append([]string{"serve"}, args...)...)
	cmd.Env = picoproc.Env(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("pico serve %s still ran after 30s; want it refused\nstdout:\n%s", strings.Join(args, " "), &stdout)
	case err == nil:
		t.Fatalf("pico serve %s exited 0; want it refused\nstderr:\n%s", strings.Join(args, " "), &stderr)
	case !errors.As(err, &exit):
		t.Fatal(err)
	}
	if strings.Contains(stdout.String(), "serving on") {
		t.Errorf("pico serve %s served before it stopped:\n%s", strings.Join(args, " "), &stdout)
	}
	for _, f := range fragments {
		if !strings.Contains(stderr.String(), f) {
			t.Errorf("pico serve %s (exit %d): stderr %q does not name %q", strings.Join(args, " "), exit.ExitCode(), stderr.String(), f)
		}
	}
}

// TestAuthServeBindGuard: with --auth off, no listener binds beyond
// loopback unless --insecure-allow-remote says so; with --auth required
// they may.
func TestAuthServeBindGuard(t *testing.T) {
	for _, flag := range []string{"--listen", "--ds-listen", "--admin-listen"} {
		t.Run("refused/"+strings.TrimPrefix(flag, "--"), func(t *testing.T) {
			args := nodeConfig{dataDir: t.TempDir()}.args()
			serveRefused(t, append(args, "--auth", "off", flag, "0.0.0.0:0"),
				flag+" 0.0.0.0:0 is not a loopback address", "--insecure-allow-remote", "--auth required")
		})
	}
	t.Run("refused/default-auth-is-off", func(t *testing.T) {
		serveRefused(t, append(nodeConfig{dataDir: t.TempDir()}.args(), "--listen", "[::]:0"), "--listen [::]:0", "--insecure-allow-remote")
	})
	t.Run("insecure-allow-remote", func(t *testing.T) {
		n := startNode(t, nodeConfig{dataDir: t.TempDir(), listen: "0.0.0.0:0", admin: "0.0.0.0:0",
			flags: []string{"--auth", "off", "--ds-listen", "0.0.0.0:0", "--insecure-allow-remote"}})
		// Auth is off: an anonymous request is served.
		mustCreate(t, n.URL+"/open/s", "text/plain")
		send(t, "GET", n.AdminURL+"/admin/cluster", nil, nil).wantStatus(t, http.StatusOK)
	})
	t.Run("auth-required", func(t *testing.T) {
		n := startNode(t, nodeConfig{dataDir: t.TempDir(), listen: "0.0.0.0:0", admin: "0.0.0.0:0",
			flags: authFlags("--ds-listen", "0.0.0.0:0")})
		wantRefusal(t, send(t, "PUT", n.URL+"/closed/s", nil, nil), lnPico, http.StatusUnauthorized, "")
		wantRefusal(t, send(t, "GET", n.AdminURL+"/admin/cluster", nil, nil), lnAdmin, http.StatusUnauthorized, "")
		send(t, "GET", n.AdminURL+"/health", nil, nil).wantStatus(t, http.StatusOK)
		send(t, "PUT", n.URL+"/closed/s", bearer(rootToken), nil).wantStatus(t, http.StatusCreated)
	})
}

// TestAuthServeBootstrap: --auth required needs a token stored or given;
// the bootstrap token is stored once and may be given again, from a flag
// or a file; another secret under its id stops the node.
func TestAuthServeBootstrap(t *testing.T) {
	t.Run("required-without-a-token", func(t *testing.T) {
		serveRefused(t, append(nodeConfig{dataDir: t.TempDir()}.args(), "--auth", "required"),
			"--auth required, but no token is stored", "--auth-bootstrap-token")
	})
	t.Run("malformed-bootstrap-token", func(t *testing.T) {
		serveRefused(t, append(nodeConfig{dataDir: t.TempDir()}.args(), "--auth", "required", "--auth-bootstrap-token", "root:secret"),
			"bootstrap token")
	})
	t.Run("token-and-file", func(t *testing.T) {
		serveRefused(t, append(nodeConfig{dataDir: t.TempDir()}.args(), "--auth", "required",
			"--auth-bootstrap-token", rootToken, "--auth-bootstrap-token-file", "/dev/null"), "not both")
	})
	t.Run("file-restart-and-conflict", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "root.token")
		if err := os.WriteFile(file, []byte(rootToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		first := startNode(t, nodeConfig{dataDir: dir, flags: []string{"--auth", "required", "--auth-bootstrap-token-file", file}})
		send(t, "GET", first.AdminURL+"/admin/cluster", bearer(rootToken), nil).wantStatus(t, http.StatusOK)
		first.Stop(t, syscall.SIGTERM)
		// The same token again, then none: the stored one serves.
		again := startNode(t, nodeConfig{dataDir: dir, flags: []string{"--auth", "required", "--auth-bootstrap-token", rootToken}})
		again.Stop(t, syscall.SIGTERM)
		none := startNode(t, nodeConfig{dataDir: dir, flags: []string{"--auth", "required"}})
		send(t, "GET", none.AdminURL+"/admin/cluster", bearer(rootToken), nil).wantStatus(t, http.StatusOK)
		none.Stop(t, syscall.SIGTERM)
		other := domain.FormatToken(domain.Credential{ID: rootCred.ID, Secret: []byte("another-root-secret-0123456789ab")})
		serveRefused(t, append(nodeConfig{dataDir: dir}.args(), "--auth", "required", "--auth-bootstrap-token", other),
			`a different token is stored under the bootstrap token's id ("root")`)
	})
}
