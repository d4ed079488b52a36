// Package deploy checks the deployment files under cmd/pico/deploy (the
// Dockerfile, the compose harnesses and their .env examples) against the
// binary they run, since no Docker engine runs where the tests do: every
// PICO_* variable must name a real `pico serve` flag, every published port
// and healthcheck must reach the listener it claims, every image must be
// pinned by tag, and the binary built as the Dockerfile builds it must be
// static.
package deploy

import (
	"bufio"
	"debug/elf"
	"fmt"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Flags maps each `pico serve` flag's variable (PICO_NODE_ID) to its
// default, as `pico serve -h` prints them.
type Flags map[string]string

var flagLine = regexp.MustCompile(`^\s+--([a-z0-9-]+)\s+\((PICO_[A-Z0-9_]+), default "(.*)"\)$`)

// ParseFlagHelp reads `pico serve -h` output.
func ParseFlagHelp(help string) Flags {
	flags := Flags{}
	sc := bufio.NewScanner(strings.NewReader(help))
	for sc.Scan() {
		if m := flagLine.FindStringSubmatch(sc.Text()); m != nil {
			flags[m[2]] = m[3]
		}
	}
	return flags
}

// Image is what a deployment file says about the pico image: its ENV and
// the ports it exposes.
type Image struct {
	Env    map[string]string
	Expose []string
}

// Dockerfile is the parsed instructions of a Dockerfile, continuation
// lines joined, comments dropped.
type Dockerfile struct {
	Instructions []Instruction
}

// Instruction is one Dockerfile instruction: its keyword upper-cased and
// the rest of its line.
type Instruction struct {
	Cmd, Args string
}

// ParseDockerfile splits a Dockerfile into instructions.
func ParseDockerfile(src string) Dockerfile {
	var d Dockerfile
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		d.Instructions = append(d.Instructions, Instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
	}
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasSuffix(trimmed, `\`) {
			cur.WriteString(strings.TrimSuffix(trimmed, `\`) + " ")
			continue
		}
		cur.WriteString(trimmed)
		flush()
	}
	flush()
	return d
}

// All returns the arguments of every instruction cmd, in order.
func (d Dockerfile) All(cmd string) []string {
	var out []string
	for _, in := range d.Instructions {
		if in.Cmd == cmd {
			out = append(out, in.Args)
		}
	}
	return out
}

// FinalImage is the ENV and EXPOSE of the Dockerfile's last stage.
func (d Dockerfile) FinalImage() (Image, error) {
	img := Image{Env: map[string]string{}}
	for _, in := range d.Instructions {
		switch in.Cmd {
		case "FROM":
			img = Image{Env: map[string]string{}}
		case "ENV":
			words, err := SplitWords(in.Args)
			if err != nil {
				return img, fmt.Errorf("ENV %s: %w", in.Args, err)
			}
			for _, w := range words {
				k, v, ok := strings.Cut(w, "=")
				if !ok {
					return img, fmt.Errorf("ENV %s: want KEY=VALUE pairs", in.Args)
				}
				img.Env[k] = v
			}
		case "EXPOSE":
			img.Expose = append(img.Expose, strings.Fields(in.Args)...)
		}
	}
	return img, nil
}

// GoBuild finds the one RUN line that runs `go build` and returns its
// environment assignments and the arguments after `go build`.
func (d Dockerfile) GoBuild() (env, args []string, err error) {
	var found []string
	for _, run := range d.All("RUN") {
		if strings.Contains(run, "go build") {
			found = append(found, run)
		}
	}
	if len(found) != 1 {
		return nil, nil, fmt.Errorf("want one RUN line with go build, found %d", len(found))
	}
	words, err := SplitWords(found[0])
	if err != nil {
		return nil, nil, err
	}
	for i, w := range words {
		if w == "go" && i+1 < len(words) && words[i+1] == "build" {
			return env, words[i+2:], nil
		}
		if !strings.Contains(w, "=") {
			return nil, nil, fmt.Errorf("RUN %s: only VAR=VALUE may come before go build, not %q", found[0], w)
		}
		env = append(env, w)
	}
	return nil, nil, fmt.Errorf("RUN %s: no go build", found[0])
}

// SplitWords splits a shell line into words, honouring double and single
// quotes; it is enough for the Dockerfile's simple lines.
func SplitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// PinnedImage reports what is wrong with an image reference, "" if it is
// pinned: a tag other than latest, or a digest.
func PinnedImage(ref string) string {
	if strings.Contains(ref, "@sha256:") {
		return ""
	}
	name := ref[strings.LastIndex(ref, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	switch {
	case !ok || tag == "":
		return fmt.Sprintf("image %q has no tag", ref)
	case tag == "latest":
		return fmt.Sprintf("image %q is tagged latest, which moves", ref)
	case strings.Contains(tag, "$"):
		return fmt.Sprintf("image %q takes its tag from a variable", ref)
	}
	return ""
}

// CheckDockerfile checks the pico image against the binary's flags.
func CheckDockerfile(d Dockerfile, flags Flags) []string {
	var problems []string
	for _, from := range d.All("FROM") {
		words := strings.Fields(from)
		var ref string
		for _, w := range words {
			if !strings.HasPrefix(w, "--") {
				ref = w
				break
			}
		}
		if ref == "scratch" {
			continue // the empty image, not pulled
		}
		if p := PinnedImage(ref); p != "" {
			problems = append(problems, "FROM: "+p)
		}
	}
	img, err := d.FinalImage()
	if err != nil {
		return append(problems, err.Error())
	}
	for k := range img.Env {
		if strings.HasPrefix(k, "PICO_") {
			if _, ok := flags[k]; !ok {
				problems = append(problems, fmt.Sprintf("ENV %s names no pico serve flag", k))
			}
		}
	}
	// Inside the container the listeners keep the binary's default ports
	// and bind all interfaces, so -p 4437:4437 reaches them.
	var want []string
	for _, v := range []string{"PICO_LISTEN", "PICO_ADMIN_LISTEN"} {
		host, port := splitHostPort(img.Env[v])
		_, defPort := splitHostPort(flags[v])
		if host != "0.0.0.0" || port != defPort || port == "" {
			problems = append(problems, fmt.Sprintf("ENV %s=%q: want 0.0.0.0 and the default port of %q", v, img.Env[v], flags[v]))
		}
		want = append(want, defPort)
	}
	if !slices.Equal(img.Expose, want) {
		problems = append(problems, fmt.Sprintf("EXPOSE %v, want %v", img.Expose, want))
	}
	last := func(cmd string) string {
		all := d.All(cmd)
		if len(all) == 0 {
			return ""
		}
		return all[len(all)-1]
	}
	if got := last("ENTRYPOINT"); got != `["pico"]` {
		problems = append(problems, fmt.Sprintf(`ENTRYPOINT %s, want ["pico"]`, got))
	}
	if got := last("CMD"); got != `["serve"]` {
		problems = append(problems, fmt.Sprintf(`CMD %s, want ["serve"]`, got))
	}
	user, _, _ := strings.Cut(last("USER"), ":")
	if user == "" || user == "0" || user == "root" {
		problems = append(problems, fmt.Sprintf("USER %q: the image must run as a non-root user", last("USER")))
	}
	env, _, err := d.GoBuild()
	if err != nil {
		problems = append(problems, err.Error())
	} else if !slices.Contains(env, "CGO_ENABLED=0") {
		problems = append(problems, "go build runs without CGO_ENABLED=0, so the binary may not be static")
	}
	return problems
}

func splitHostPort(addr string) (host, port string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", ""
	}
	return host, port
}

// Compose is the part of a compose file the checks read.
type Compose struct {
	Services map[string]Service `yaml:"services"`
}

// Service is one compose service. Environment and Ports keep both of
// compose's spellings (a map or a list of KEY=VALUE; short strings or
// long maps), read by EnvMap and PortPairs.
type Service struct {
	Image       string         `yaml:"image"`
	Build       any            `yaml:"build"`
	Environment any            `yaml:"environment"`
	Ports       []any          `yaml:"ports"`
	Healthcheck map[string]any `yaml:"healthcheck"`
	DependsOn   any            `yaml:"depends_on"`
}

// ParseCompose decodes a compose file; YAML anchors and merge keys are
// resolved as compose resolves them.
func ParseCompose(src []byte) (Compose, error) {
	var c Compose
	if err := yaml.Unmarshal(src, &c); err != nil {
		return c, err
	}
	if len(c.Services) == 0 {
		return c, fmt.Errorf("no services")
	}
	return c, nil
}

// EnvMap returns a service's environment as a map, values uninterpolated.
func (s Service) EnvMap() (map[string]string, error) {
	out := map[string]string{}
	switch env := s.Environment.(type) {
	case nil:
	case map[string]any:
		for k, v := range env {
			if v == nil {
				out[k] = ""
			} else {
				out[k] = fmt.Sprint(v)
			}
		}
	case []any:
		for _, kv := range env {
			k, v, _ := strings.Cut(fmt.Sprint(kv), "=")
			out[k] = v
		}
	default:
		return nil, fmt.Errorf("environment is a %T", env)
	}
	return out, nil
}

// PortPair is one published port: the host's side and the container's.
type PortPair struct{ Host, Container string }

// PortPairs reads a service's ports in either syntax.
func (s Service) PortPairs() ([]PortPair, error) {
	var out []PortPair
	for _, p := range s.Ports {
		switch p := p.(type) {
		case string:
			p = strings.TrimSuffix(p, "/tcp")
			parts := strings.Split(p, ":")
			if len(parts) < 2 {
				return nil, fmt.Errorf("port %q: publish it as HOST:CONTAINER", p)
			}
			out = append(out, PortPair{parts[len(parts)-2], parts[len(parts)-1]})
		case map[string]any:
			out = append(out, PortPair{fmt.Sprint(p["published"]), fmt.Sprint(p["target"])})
		default:
			return nil, fmt.Errorf("port %v: a %T", p, p)
		}
	}
	return out, nil
}

// interpolation is one ${NAME…} reference; compose's forms are ${NAME},
// ${NAME:-default}, ${NAME-default}, ${NAME:?error} and ${NAME?error}.
var interpolation = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}`)

// Variable is one variable a compose file reads.
type Variable struct {
	Name     string
	Default  string
	Required bool // ${NAME:?…}: compose refuses to start without it
}

// Interpolate resolves a value as compose would with no variable set,
// and returns the variables it reads.
func Interpolate(value string) (string, []Variable) {
	var vars []Variable
	out := interpolation.ReplaceAllStringFunc(value, func(ref string) string {
		m := interpolation.FindStringSubmatch(ref)
		v := Variable{Name: m[1]}
		switch strings.TrimPrefix(m[2], ":") {
		case "-":
			v.Default = m[3]
		case "?":
			v.Required = true
		}
		vars = append(vars, v)
		return v.Default
	})
	return out, vars
}

// Variables lists every variable a compose file reads, by name.
func Variables(src []byte) map[string]Variable {
	out := map[string]Variable{}
	_, vars := Interpolate(string(src))
	for _, v := range vars {
		out[v.Name] = v
	}
	return out
}

// CheckCompose checks one compose file. A service built from the
// repository runs the pico image: its environment, over the image's,
// must use real flags, publish both listeners' container ports and probe
// /ready on the admin port. Every other service's image must be pinned.
func CheckCompose(c Compose, img Image, flags Flags) []string {
	var problems []string
	add := func(svc, format string, args ...any) {
		problems = append(problems, svc+": "+fmt.Sprintf(format, args...))
	}
	names := make([]string, 0, len(c.Services))
	for name := range c.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := c.Services[name]
		switch deps := s.DependsOn.(type) {
		case map[string]any:
			for d := range deps {
				if _, ok := c.Services[d]; !ok {
					add(name, "depends on %q, which is no service here", d)
				}
			}
		case []any:
			for _, d := range deps {
				if _, ok := c.Services[fmt.Sprint(d)]; !ok {
					add(name, "depends on %q, which is no service here", d)
				}
			}
		}
		env, err := s.EnvMap()
		if err != nil {
			add(name, "%v", err)
			continue
		}
		if s.Build == nil {
			if p := PinnedImage(s.Image); p != "" {
				add(name, "%s", p)
			}
			for k := range env {
				if strings.HasPrefix(k, "PICO_") {
					add(name, "sets %s but does not run pico", k)
				}
			}
			continue
		}
		if s.Image != "" {
			add(name, "is built here, so it should not also name an image (%q)", s.Image)
		}
		eff := map[string]string{}
		for k, v := range img.Env {
			eff[k] = v
		}
		for k, v := range env {
			if strings.HasPrefix(k, "PICO_") {
				if _, ok := flags[k]; !ok {
					add(name, "%s names no pico serve flag", k)
				}
			}
			eff[k], _ = Interpolate(v)
		}
		listenPort := portOf(eff, flags, "PICO_LISTEN")
		adminPort := portOf(eff, flags, "PICO_ADMIN_LISTEN")
		pairs, err := s.PortPairs()
		if err != nil {
			add(name, "%v", err)
		}
		published := map[string]bool{}
		for _, p := range pairs {
			published[p.Container] = true
			if p.Container != listenPort && p.Container != adminPort {
				add(name, "publishes container port %s, where no listener is (protocol %s, admin %s)", p.Container, listenPort, adminPort)
			}
		}
		for _, want := range []string{listenPort, adminPort} {
			if !published[want] {
				add(name, "does not publish container port %s", want)
			}
		}
		if problem := checkHealthcheck(s.Healthcheck, adminPort); problem != "" {
			add(name, "%s", problem)
		}
	}
	return problems
}

// portOf is the port of a listen address after the image's and the
// service's environment, else the flag's default.
func portOf(env map[string]string, flags Flags, name string) string {
	addr, ok := env[name]
	if !ok {
		addr = flags[name]
	}
	_, port := splitHostPort(addr)
	return port
}

var probeURL = regexp.MustCompile(`^http://(127\.0\.0\.1|localhost):(\d+)/ready$`)

// checkHealthcheck wants `pico probe` of /ready on the admin port.
func checkHealthcheck(hc map[string]any, adminPort string) string {
	if hc == nil {
		return "has no healthcheck"
	}
	test, ok := hc["test"].([]any)
	if !ok || len(test) != 4 || fmt.Sprint(test[0]) != "CMD" || fmt.Sprint(test[1]) != "pico" || fmt.Sprint(test[2]) != "probe" {
		return fmt.Sprintf(`healthcheck %v: want ["CMD", "pico", "probe", "http://127.0.0.1:%s/ready"]`, hc["test"], adminPort)
	}
	m := probeURL.FindStringSubmatch(fmt.Sprint(test[3]))
	if m == nil || m[2] != adminPort {
		return fmt.Sprintf("healthcheck probes %v, not /ready on the admin port %s", test[3], adminPort)
	}
	return ""
}

// ParseEnvFile reads a .env file's KEY=VALUE lines, comments skipped.
func ParseEnvFile(src string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("line %d: %q is not KEY=VALUE", i+1, line)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("line %d: %s set twice", i+1, k)
		}
		out[k] = v
	}
	return out, nil
}

// StaticProblems reports why an ELF binary is not static: a program
// interpreter or a dynamic section means it needs a loader and shared
// libraries that the empty base image lacks.
func StaticProblems(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var problems []string
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			problems = append(problems, "has a program interpreter (PT_INTERP)")
		case elf.PT_DYNAMIC:
			problems = append(problems, "has a dynamic segment (PT_DYNAMIC)")
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		problems = append(problems, "imports "+strconv.Quote(strings.Join(libs, " ")))
	}
	return problems, nil
}
