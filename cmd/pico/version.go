package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// runVersion prints the module version, the VCS revision the binary was
// built from (when the build recorded one) and the Go version.
func runVersion(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cmd := newCommandWithoutGlobals("version", "pico version")
	if _, err := cmd.parse(args, 0, 0); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionLine())
	return nil
}

// versionLine is "pico VERSION [REVISION[-dirty]] GOVERSION".
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "pico (no build information)"
	}
	line := "pico " + info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		line += " " + rev
		if settings["vcs.modified"] == "true" {
			line += "-dirty"
		}
	}
	return line + " " + info.GoVersion
}
