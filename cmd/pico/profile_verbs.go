package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
)

const configSynopsis = "pico config set NAME [--endpoint U] [--protocol P] [--http2|--no-http2] | get [NAME] | ls | rm NAME | use NAME | path"

// configVerbs are the subcommands of pico config, each given its
// positional arguments (after the subcommand) and the parsed command.
var configVerbs = map[string]struct {
	args int // positional arguments; -1: zero or one
	run  func(c *configCommand) error
}{
	"set":  {1, (*configCommand).set},
	"get":  {-1, (*configCommand).get},
	"ls":   {0, (*configCommand).list},
	"rm":   {1, (*configCommand).remove},
	"use":  {1, (*configCommand).use},
	"path": {0, (*configCommand).path},
}

// configCommand is one pico config invocation.
type configCommand struct {
	*command
	noHTTP2        bool
	args           []string
	stdout, stderr io.Writer
}

func runConfig(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	c := &configCommand{command: newCommand("config", configSynopsis), stdout: stdout, stderr: stderr}
	c.fs.BoolVar(&c.noHTTP2, "no-http2", false, "config set: save http2=false")
	positional, err := c.parse(args, 1, 2)
	if err != nil {
		return err
	}
	sub, ok := configVerbs[positional[0]]
	c.args = positional[1:]
	switch {
	case !ok:
		return c.usageError(unknownIn("config", positional[0], configVerbs))
	case sub.args >= 0 && len(c.args) != sub.args:
		return c.usageError(fmt.Sprintf("config %s: wrong number of arguments", positional[0]))
	}
	return sub.run(c)
}

// profileName matches names that stay bare keys in TOML.
var profileName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// set saves the global flags given on this command line into a profile;
// the first profile saved becomes the default.
func (c *configCommand) set() error {
	name := c.args[0]
	if !profileName.MatchString(name) {
		return c.usageError(fmt.Sprintf("profile name %q: use letters, digits, - and _", name))
	}
	if c.given("token") {
		return c.usageError("a profile holds no token: pico auth login --profile " + name + " stores one")
	}
	if c.given("http2") && c.noHTTP2 {
		return c.usageError("--http2 and --no-http2 exclude each other")
	}
	update := c.flagSettings()
	if c.noHTTP2 {
		update.HTTP2 = new(false)
	}
	if update == (profile{}) {
		return c.usageError("nothing to save: give --endpoint, --protocol, --http2 or --no-http2")
	}
	if err := update.validate(); err != nil {
		return err
	}
	isDefault := false
	err := c.edit(func(cfg *configFile) error {
		cfg.Profiles[name] = update.over(cfg.Profiles[name])
		if cfg.DefaultProfile == "" {
			cfg.DefaultProfile = name
		}
		isDefault = cfg.DefaultProfile == name
		return nil
	})
	if err == nil {
		fmt.Fprintf(c.stderr, "saved profile %s%s\n", name, map[bool]string{true: " (default)"}[isDefault])
	}
	return err
}

// get prints the named profile, or the default one.
func (c *configCommand) get() error {
	cfg, _, err := c.load()
	if err != nil {
		return err
	}
	name := cfg.DefaultProfile
	if len(c.args) > 0 {
		name = c.args[0]
	}
	if name == "" {
		return fmt.Errorf("no default profile; name one")
	}
	p, ok := cfg.Profiles[name]
	if !ok {
		return fmt.Errorf("profile %q not found", name)
	}
	fmt.Fprintf(c.stdout, "%s %s\n", name, p)
	return nil
}

// list prints every profile, the default marked with "*".
func (c *configCommand) list() error {
	cfg, _, err := c.load()
	if err != nil {
		return err
	}
	for _, name := range cfg.profileNames() {
		mark := " "
		if name == cfg.DefaultProfile {
			mark = "*"
		}
		fmt.Fprintf(c.stdout, "%s %s %s\n", mark, name, cfg.Profiles[name])
	}
	return nil
}

func (c *configCommand) remove() error {
	name := c.args[0]
	err := c.edit(func(cfg *configFile) error {
		if _, ok := cfg.Profiles[name]; !ok {
			return fmt.Errorf("profile %q not found", name)
		}
		delete(cfg.Profiles, name)
		if cfg.DefaultProfile == name {
			cfg.DefaultProfile = ""
		}
		return nil
	})
	if err == nil {
		fmt.Fprintf(c.stderr, "removed profile %s\n", name)
	}
	return err
}

func (c *configCommand) use() error {
	name := c.args[0]
	err := c.edit(func(cfg *configFile) error {
		if _, ok := cfg.Profiles[name]; !ok {
			return fmt.Errorf("profile %q not found", name)
		}
		cfg.DefaultProfile = name
		return nil
	})
	if err == nil {
		fmt.Fprintf(c.stderr, "default profile %s\n", name)
	}
	return err
}

func (c *configCommand) path() error {
	path, err := configPath()
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, path)
	return nil
}

func (c *configCommand) load() (*configFile, string, error) {
	path, err := configPath()
	if err != nil {
		return nil, "", err
	}
	cfg, err := loadConfig(path)
	return cfg, path, err
}

// edit loads the file, applies change and saves the result.
func (c *configCommand) edit(change func(*configFile) error) error {
	cfg, path, err := c.load()
	if err != nil {
		return err
	}
	if err := change(cfg); err != nil {
		return err
	}
	return cfg.save(path)
}
