package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/picomq/pico/adapters/dsclient"
	"github.com/picomq/pico/adapters/picoclient"
)

const defaultEndpoint = "http://127.0.0.1:4437"

// defaults is the last layer of the settings, under flags, env and profile.
var defaults = profile{Endpoint: defaultEndpoint, Protocol: "pico", HTTP2: new(false)}

// globalFlags are the flags every client verb takes, before or after it.
type globalFlags struct {
	endpoint, protocol, profile, token string
	http2                              bool
}

// globalEnv names each global flag's environment variable.
var globalEnv = map[string]string{
	"endpoint": "PICO_ENDPOINT", "protocol": "PICO_PROTOCOL", "http2": "PICO_HTTP2", "profile": "PICO_PROFILE",
	"token":          tokenEnv,
	"admin-endpoint": "PICO_ADMIN_ENDPOINT", // pico admin's only
}

func (g *globalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&g.endpoint, "endpoint", defaultEndpoint, "server URL")
	fs.StringVar(&g.protocol, "protocol", "pico", "client wire protocol: pico or ds")
	fs.BoolVar(&g.http2, "http2", false, "speak HTTP/2 (h2c to http:// endpoints)")
	fs.StringVar(&g.profile, "profile", "", "saved profile to use (see pico config)")
	g.registerToken(fs)
}

// registerToken adds --token alone, for pico admin, which takes no other
// global flag.
func (g *globalFlags) registerToken(fs *flag.FlagSet) {
	fs.StringVar(&g.token, "token", "", "bearer token to send (default: the one pico auth login stored for the profile)")
}

// command is a verb's flag set: its own flags plus the global ones.
type command struct {
	fs       *flag.FlagSet
	synopsis string
	notes    string // printed after the flags in the help
	globals  globalFlags
}

func newCommand(name, synopsis string) *command {
	c := newCommandWithoutGlobals(name, synopsis)
	c.globals.register(c.fs)
	return c
}

// newCommandWithoutGlobals is a verb that does not talk to a stream
// endpoint, so the global flags would mean nothing to it.
func newCommandWithoutGlobals(name, synopsis string) *command {
	c := &command{fs: flag.NewFlagSet(name, flag.ContinueOnError), synopsis: synopsis}
	c.fs.SetOutput(io.Discard)
	return c
}

// parse parses flags wherever they appear among args and returns the
// positional arguments, between min and max of them (the usage printed
// with the error says which).
func (c *command) parse(args []string, min, max int) ([]string, error) {
	positional, err := parseInterspersed(c.fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, &helpRequest{text: c.help()}
	}
	if err == nil && (len(positional) < min || len(positional) > max) {
		err = fmt.Errorf("%s: wrong number of arguments", c.fs.Name())
	}
	if err != nil {
		return nil, c.usageError(flagMistake(c.fs, err))
	}
	return positional, nil
}

// parseName parses a verb that takes exactly one stream name.
func (c *command) parseName(args []string) (string, error) {
	positional, err := c.parse(args, 1, 1)
	if err != nil {
		return "", err
	}
	return positional[0], nil
}

// parseInterspersed is flag parsing that goes on past positional
// arguments, so "read /s --from 3" works; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); (used > 0 && args[used-1] == "--") || len(rest) == 0 {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func (c *command) given(name string) bool {
	found := false
	c.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

func (c *command) usageError(msg string) error {
	return &usageError{msg: msg, usage: "usage: " + c.synopsis + "\n"}
}

// help lists the verb's flags, naming the environment variable of each
// global one.
func (c *command) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n\nflags:\n", c.synopsis)
	c.fs.VisitAll(func(f *flag.Flag) {
		dashes := "--"
		if len(f.Name) == 1 {
			dashes = "-" // a short form: -f, -d
		}
		fmt.Fprintf(&b, "  %s%s", dashes, f.Name)
		if env := globalEnv[f.Name]; env != "" {
			fmt.Fprintf(&b, " (%s)", env)
		}
		fmt.Fprintf(&b, "\n      %s", f.Usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
	if c.notes != "" {
		b.WriteString("\n" + c.notes)
	}
	return b.String()
}

// settings resolves the global flags. Each setting comes from the first of:
// the flag, its environment variable, the profile, the default.
func (c *command) settings() (profile, error) {
	env, err := envSettings()
	if err != nil {
		return profile{}, err
	}
	p := c.flagSettings().over(env)
	name := os.Getenv(globalEnv["profile"])
	if c.given("profile") {
		name = c.globals.profile
	}
	if name != "" || !p.complete() {
		saved, err := savedProfile(name)
		if err != nil {
			return profile{}, err
		}
		p = p.over(saved)
	}
	p = p.over(defaults)
	return p, p.validate()
}

func (c *command) flagSettings() profile {
	var p profile
	if c.given("endpoint") {
		p.Endpoint = c.globals.endpoint
	}
	if c.given("protocol") {
		p.Protocol = c.globals.protocol
	}
	if c.given("http2") {
		p.HTTP2 = new(c.globals.http2)
	}
	return p
}

func envSettings() (profile, error) {
	p := profile{Endpoint: os.Getenv(globalEnv["endpoint"]), Protocol: os.Getenv(globalEnv["protocol"])}
	if v := os.Getenv(globalEnv["http2"]); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return profile{}, fmt.Errorf("%s=%q: want true or false", globalEnv["http2"], v)
		}
		p.HTTP2 = &on
	}
	return p, nil
}

// connection resolves the settings and the credential a client needs.
func (c *command) connection() (profile, credential, error) {
	p, err := c.settings()
	if err != nil {
		return profile{}, credential{}, err
	}
	cred, err := c.credential()
	return p, cred, err
}

// client returns a client of the configured protocol for the resolved
// settings and credential.
func (c *command) client() (streamClient, error) {
	p, cred, err := c.connection()
	if err != nil {
		return nil, err
	}
	return clientFor(p, cred), nil
}

// clientFor returns a client of p's protocol sending cred, with
// connections of its own.
func clientFor(p profile, cred credential) streamClient {
	if p.Protocol == "ds" {
		c := dsclient.New(p.Endpoint, dsclient.Options(clientOptions(p, cred)))
		checkProtocol(c.HTTP, "ds")
		return dsStreams{c}
	}
	return picoStreams{newPicoClient(p, cred)}
}

// newPicoClient is a Pico client that names a Durable Streams listener
// for what it is.
func newPicoClient(p profile, cred credential) *picoclient.Client {
	c := picoclient.New(p.Endpoint, clientOptions(p, cred))
	checkProtocol(c.HTTPClient(), "pico")
	return c
}

// clientOptions are the options of either protocol's client (both are
// httpclient's).
func clientOptions(p profile, cred credential) picoclient.Options {
	return picoclient.Options{HTTP2: *p.HTTP2, UserAgent: "pico-cli", Token: cred.wire}
}

// picoClient returns a Pico client for a verb Durable Streams has no
// counterpart of; why says what DS lacks.
func (c *command) picoClient(why string) (*picoclient.Client, error) {
	p, cred, err := c.connection()
	if err != nil {
		return nil, err
	}
	if p.Protocol == "ds" {
		return nil, fmt.Errorf("%s is Pico-only: %s; use --protocol pico", c.fs.Name(), why)
	}
	return newPicoClient(p, cred), nil
}

func validateEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q: want http://HOST:PORT or https://HOST", endpoint)
	}
	return nil
}

func validateProtocol(protocol string) error {
	if protocol != "pico" && protocol != "ds" {
		return fmt.Errorf("protocol %q: want pico or ds", protocol)
	}
	return nil
}
