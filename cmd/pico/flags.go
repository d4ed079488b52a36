package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// envName maps a flag to its environment variable: --node-id → PICO_NODE_ID.
func envName(flagName string) string {
	return "PICO_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseWithEnv parses args; a flag not given on the command line takes its
// PICO_* environment variable when set (the flag wins).
func parseWithEnv(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v, ok := os.LookupEnv(envName(f.Name))
		if given[f.Name] || !ok || err != nil {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, serr)
		}
	})
	return err
}

// usageWithEnv prints flag help naming each flag's environment variable.
func usageWithEnv(fs *flag.FlagSet, synopsis string) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n\nflags (each also read from its PICO_* variable; the flag wins):\n", synopsis)
		fs.VisitAll(func(f *flag.Flag) {
			fmt.Fprintf(fs.Output(), "  --%s  (%s, default %q)\n      %s\n", f.Name, envName(f.Name), f.DefValue, f.Usage)
		})
	}
}
