package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/picomq/pico/domain"
)

// actionlintVersion pins the workflow linter; `go run` builds it on first
// use into the module cache.
const actionlintVersion = "v1.7.12"

// repoRoot is the repository's root, relative to this package's
// directory, where go test runs its tests.
const repoRoot = "../.."

func deployDir(*testing.T) string { return filepath.Join(repoRoot, "cmd", "pico", "deploy") }

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dockerfile(t *testing.T) Dockerfile {
	return ParseDockerfile(string(read(t, filepath.Join(deployDir(t), "Dockerfile"))))
}

// built is the binary built as the Dockerfile builds it, shared by the
// tests: it is both the static-binary check and the source of the flags.
var built struct {
	once sync.Once
	dir  string
	path string
	err  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildAsDockerfile runs the Dockerfile's own go build line, with its
// environment, for this machine's platform and into a temporary file.
func buildAsDockerfile(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		env, args, err := dockerfile(t).GoBuild()
		if err != nil {
			built.err = err.Error()
			return
		}
		if built.dir, err = os.MkdirTemp("", "pico-deploy-"); err != nil {
			built.err = err.Error()
			return
		}
		built.path = filepath.Join(built.dir, "pico")
		i := slices.Index(args, "-o")
		if i < 0 || i+1 >= len(args) {
			built.err = "the Dockerfile's go build has no -o OUTPUT"
			return
		}
		args = slices.Clone(args)
		args[i+1] = built.path
		platform := strings.NewReplacer("$TARGETOS", runtime.GOOS, "$TARGETARCH", runtime.GOARCH)
		cmd := exec.Command("go", append([]string{"build"}, args...)...)
		cmd.Dir = repoRoot
		cmd.Env = os.Environ()
		for _, kv := range env {
			cmd.Env = append(cmd.Env, platform.Replace(kv))
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = "go build " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(out)
		}
	})
	if built.err != "" {
		t.Fatal(built.err)
	}
	return built.path
}

// serveFlags is the flag set of the built binary's `pico serve -h`.
func serveFlags(t *testing.T) Flags {
	t.Helper()
	cmd := exec.Command(buildAsDockerfile(t), "serve", "-h")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PICO_") { // the help shows defaults, not a shell's settings
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pico serve -h: %v\n%s", err, out)
	}
	flags := ParseFlagHelp(string(out))
	for _, name := range []string{"PICO_LISTEN", "PICO_ADMIN_LISTEN", "PICO_AUTH", "PICO_AUTH_BOOTSTRAP_TOKEN"} {
		if _, ok := flags[name]; !ok {
			t.Fatalf("pico serve -h lists no %s; its format changed?\n%s", name, out)
		}
	}
	return flags
}

func TestBinaryIsStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image is Linux; its ELF check needs a Linux build")
	}
	problems, err := StaticProblems(buildAsDockerfile(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("the binary built as the Dockerfile builds it %s", p)
	}
}

// The static check must be able to fail: a dynamically linked system
// binary is not static.
func TestStaticProblemsFindsADynamicBinary(t *testing.T) {
	for _, path := range []string{"/bin/sh", "/usr/bin/env", "/bin/ls"} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		problems, err := StaticProblems(path)
		if err != nil {
			t.Skipf("%s: %v", path, err)
		}
		if len(problems) == 0 {
			t.Skipf("%s is static here; nothing to show", path)
		}
		return
	}
	t.Skip("no system binary to check")
}

func TestDockerfile(t *testing.T) {
	for _, p := range CheckDockerfile(dockerfile(t), serveFlags(t)) {
		t.Error(p)
	}
}

func TestDockerfileChecksFail(t *testing.T) {
	flags := serveFlags(t)
	good := string(read(t, filepath.Join(deployDir(t), "Dockerfile")))
	if got := CheckDockerfile(ParseDockerfile(good), flags); len(got) != 0 {
		t.Fatalf("the real Dockerfile: %v", got)
	}
	cases := map[string][2]string{
		"builder on latest":      {"golang:1.26.8-trixie", "golang:latest"},
		"builder untagged":       {"golang:1.26.8-trixie", "golang"},
		"cgo on":                 {"CGO_ENABLED=0 GOOS", "CGO_ENABLED=1 GOOS"},
		"root user":              {"USER 65532:65532", "USER root"},
		"unknown variable":       {"PICO_ADMIN_LISTEN=0.0.0.0:9090", "PICO_ADMIN_LISTEN=0.0.0.0:9090 PICO_ADMIN_LISTENER=x"},
		"loopback inside":        {"PICO_LISTEN=0.0.0.0:4437", "PICO_LISTEN=127.0.0.1:4437"},
		"moved port":             {"PICO_LISTEN=0.0.0.0:4437", "PICO_LISTEN=0.0.0.0:8080"},
		"exposes the wrong port": {"EXPOSE 4437 9090", "EXPOSE 4437 9091"},
		"no serve":               {`CMD ["serve"]`, `CMD ["ls"]`},
	}
	for name, c := range cases {
		bad := strings.Replace(good, c[0], c[1], 1)
		if bad == good {
			t.Errorf("%s: %q is not in the Dockerfile", name, c[0])
			continue
		}
		if got := CheckDockerfile(ParseDockerfile(bad), flags); len(got) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
}

// composeFiles lists every compose file under cmd/pico/deploy.
func composeFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*/compose.yml", "*/compose.*.yml"} {
		m, err := filepath.Glob(filepath.Join(deployDir(t), pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return files
}

func TestComposeFiles(t *testing.T) {
	flags := serveFlags(t)
	img, err := dockerfile(t).FinalImage()
	if err != nil {
		t.Fatal(err)
	}
	files := composeFiles(t)
	want := []string{"aio/compose.cluster.yml", "aio/compose.lite.yml", "aio/compose.yml", "byo/compose.yml"}
	var got []string
	for _, f := range files {
		rel, _ := filepath.Rel(deployDir(t), f)
		got = append(got, filepath.ToSlash(rel))
	}
	if !slices.Equal(got, want) {
		t.Errorf("compose files %v, want %v", got, want)
	}
	for _, f := range files {
		src := read(t, f)
		c, err := ParseCompose(src)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, p := range CheckCompose(c, img, flags) {
			t.Errorf("%s: %s", f, p)
		}
		for name := range Variables(src) {
			if _, ok := flags[name]; strings.HasPrefix(name, "PICO_") && !ok {
				t.Errorf("%s reads ${%s}, which names no pico serve flag", f, name)
			}
		}
	}
}

// The cluster harness runs two nodes on the ports the README gives.
func TestClusterPorts(t *testing.T) {
	c, err := ParseCompose(read(t, filepath.Join(deployDir(t), "aio", "compose.cluster.yml")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]PortPair{
		"pico-1": {{"4437", "4437"}, {"9090", "9090"}},
		"pico-2": {{"4438", "4437"}, {"9091", "9090"}},
	}
	ids := map[string]bool{}
	for name, ports := range want {
		s, ok := c.Services[name]
		if !ok {
			t.Fatalf("no service %s", name)
		}
		got, err := s.PortPairs()
		if err != nil || !slices.Equal(got, ports) {
			t.Errorf("%s publishes %v (%v), want %v", name, got, err, ports)
		}
		env, _ := s.EnvMap()
		ids[env["PICO_NODE_ID"]] = true
		if _, port := splitHostPort(strings.TrimPrefix(env["PICO_HTTP_ADDRESS"], "http://")); port != ports[0].Host {
			t.Errorf("%s advertises %q; redirects must reach it on host port %s", name, env["PICO_HTTP_ADDRESS"], ports[0].Host)
		}
	}
	if len(ids) != 2 {
		t.Errorf("the nodes' ids %v are not distinct", ids)
	}
}

// Each check of CheckCompose must be able to fail: a bad snippet per case.
func TestComposeChecksFail(t *testing.T) {
	flags := serveFlags(t)
	img, err := dockerfile(t).FinalImage()
	if err != nil {
		t.Fatal(err)
	}
	const node = `
  pico:
    build: {context: ../../../.., dockerfile: cmd/pico/deploy/Dockerfile}
    environment: {PICO_AUTH: required}
    ports: ["4437:4437", "9090:9090"]
    healthcheck: {test: ["CMD", "pico", "probe", "http://127.0.0.1:9090/ready"]}
`
	if got := CheckCompose(mustCompose(t, "services:"+node), img, flags); len(got) != 0 {
		t.Fatalf("the good snippet: %v", got)
	}
	cases := map[string]string{
		"image on latest":       "services:" + node + "  db: {image: postgres:latest}\n",
		"untagged image":        "services:" + node + "  db: {image: postgres}\n",
		"unknown variable":      strings.Replace("services:"+node, "PICO_AUTH: required", "PICO_AUTH: required, PICO_AUHT: off", 1),
		"list environment typo": strings.Replace("services:"+node, "{PICO_AUTH: required}", "[PICO_AUTH=required, PICO_LISTN=0.0.0.0:4437]", 1),
		"wrong container port":  strings.Replace("services:"+node, `"4437:4437"`, `"4437:4438"`, 1),
		"admin not published":   strings.Replace("services:"+node, `, "9090:9090"`, "", 1),
		"listener moved":        strings.Replace("services:"+node, "PICO_AUTH: required", "PICO_AUTH: required, PICO_LISTEN: '0.0.0.0:5000'", 1),
		"healthcheck on 4437":   strings.Replace("services:"+node, "127.0.0.1:9090/ready", "127.0.0.1:4437/ready", 1),
		"healthcheck on health": strings.Replace("services:"+node, "9090/ready", "9090/health", 1),
		"no healthcheck":        strings.Replace("services:"+node, `    healthcheck: {test: ["CMD", "pico", "probe", "http://127.0.0.1:9090/ready"]}`+"\n", "", 1),
		"unknown dependency":    strings.Replace("services:"+node, "    ports:", "    depends_on: [db]\n    ports:", 1),
	}
	for name, src := range cases {
		if got := CheckCompose(mustCompose(t, src), img, flags); len(got) == 0 {
			t.Errorf("%s: no problem found in\n%s", name, src)
		}
	}
}

func mustCompose(t *testing.T, src string) Compose {
	t.Helper()
	c, err := ParseCompose([]byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return c
}

// envExample reads dir/.env.example. Its PICO_* names must be flags;
// with allFlags every name must be (aio's .env sets nothing else).
func envExample(t *testing.T, dir string, flags Flags, allFlags bool) map[string]string {
	t.Helper()
	example, err := ParseEnvFile(string(read(t, filepath.Join(dir, ".env.example"))))
	if err != nil {
		t.Fatal(err)
	}
	for name := range example {
		if _, ok := flags[name]; !ok && (allFlags || strings.HasPrefix(name, "PICO_")) {
			t.Errorf("%s/.env.example: %s names no pico serve flag", filepath.Base(dir), name)
		}
	}
	return example
}

// sameVariables wants a compose file to read exactly what .env.example
// lists: nothing missing from the example, nothing stale in it.
func sameVariables(t *testing.T, file string, vars map[string]Variable, example map[string]string) {
	t.Helper()
	for name := range vars {
		if _, ok := example[name]; !ok {
			t.Errorf("%s reads %s, which .env.example does not list", file, name)
		}
	}
	for name := range example {
		if _, ok := vars[name]; !ok {
			t.Errorf(".env.example lists %s, which %s does not read", name, file)
		}
	}
}

// byo reads only what its .env.example lists, and refuses to start
// without the values that have no safe default.
func TestBYOEnvExample(t *testing.T) {
	flags := serveFlags(t)
	dir := filepath.Join(deployDir(t), "byo")
	src := read(t, filepath.Join(dir, "compose.yml"))
	vars := Variables(src)
	sameVariables(t, "compose.yml", vars, envExample(t, dir, flags, false))
	for _, name := range []string{"PICO_AUTH_BOOTSTRAP_TOKEN", "PICO_META_URL", "PICO_STORAGE", "PICO_HTTP_ADDRESS"} {
		if !vars[name].Required {
			t.Errorf("compose.yml must refuse to start without %s (${%s:?…})", name, name)
		}
	}
	c, err := ParseCompose(src)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := c.Services["pico"].EnvMap()
	if env["PICO_AUTH"] != "required" || env["PICO_INSECURE_ALLOW_REMOTE"] != "" {
		t.Errorf("byo must run with PICO_AUTH=required and no opt-out, has PICO_AUTH=%q PICO_INSECURE_ALLOW_REMOTE=%q",
			env["PICO_AUTH"], env["PICO_INSECURE_ALLOW_REMOTE"])
	}
}

// aio runs with auth off unless .env turns it on, and its known dev token
// is a token the node accepts.
func TestAIOEnvExample(t *testing.T) {
	flags := serveFlags(t)
	dir := filepath.Join(deployDir(t), "aio")
	example := envExample(t, dir, flags, true)
	if example["PICO_AUTH"] != "off" {
		t.Errorf(".env.example: PICO_AUTH=%q, want off (the default, spelled out)", example["PICO_AUTH"])
	}
	if _, err := domain.ParseToken(example["PICO_AUTH_BOOTSTRAP_TOKEN"]); err != nil {
		t.Errorf(".env.example: the dev token: %v", err)
	}
	for _, f := range []string{"compose.yml", "compose.cluster.yml", "compose.lite.yml"} {
		vars := Variables(read(t, filepath.Join(dir, f)))
		sameVariables(t, f, vars, example)
		if vars["PICO_AUTH"].Default != "off" {
			t.Errorf("%s: PICO_AUTH defaults to %q, want off", f, vars["PICO_AUTH"].Default)
		}
		if vars["PICO_AUTH_BOOTSTRAP_TOKEN"].Default != example["PICO_AUTH_BOOTSTRAP_TOKEN"] {
			t.Errorf("%s: the default bootstrap token is not .env.example's", f)
		}
	}
}

// The image workflow builds the same Dockerfile for both platforms and
// tags latest, version and commit; actionlint checks the rest.
func TestImageWorkflow(t *testing.T) {
	path := filepath.Join(repoRoot, ".github", "workflows", "image.yml")
	src := read(t, path)
	var wf map[string]any
	if err := yaml.Unmarshal(src, &wf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"file: cmd/pico/deploy/Dockerfile", "linux/amd64,linux/arm64",
		"type=raw,value=latest", "type=semver,pattern={{version}}", "type=sha", "branches: [main]", `tags: ["v*"]`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("image.yml has no %q", want)
		}
	}
}

func TestWorkflowsLint(t *testing.T) {
	if testing.Short() {
		t.Skip("builds actionlint on first use")
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, ".github", "workflows", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows (%v)", err)
	}
	cmd := exec.Command("go", append([]string{"run", "github.com/rhysd/actionlint/cmd/actionlint@" + actionlintVersion, "-no-color"}, files...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}

// The lint must be able to fail: an expression naming no context is an
// error actionlint reports.
func TestWorkflowsLintFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds actionlint on first use")
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yml")
	src := "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ nothing.here }}\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "github.com/rhysd/actionlint/cmd/actionlint@"+actionlintVersion, "-no-color", bad)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("actionlint passed a workflow with an unknown context:\n%s", out)
	}
}
