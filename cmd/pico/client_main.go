package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// verb is one client command. Verbs read flags from args, data from stdin,
// write data to stdout and diagnostics to stderr, and return their error
// for runClient to report.
type verb func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error

var verbs = map[string]verb{
	"create":  runCreate,
	"append":  runAppend,
	"read":    runRead,
	"tail":    runTail,
	"head":    runHead,
	"ls":      runList,
	"trim":    runTrim,
	"close":   runClose,
	"delete":  runDelete,
	"config":  runConfig,
	"auth":    runAuth,
	"admin":   runAdmin,
	"bench":   runBench,
	"version": runVersion,
}

// runClient runs a client command line (without the program name) and
// returns the exit code (exitCode lists them).
func runClient(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name, verbArgs, err := splitVerb(args)
	if err == nil {
		err = runVerb(ctx, name, verbArgs, stdin, stdout, stderr)
	}
	return report(ctx, name, err, stdout, stderr)
}

// seeHelp ends a usage error of the command line as a whole.
const seeHelp = "run pico help for the commands and global flags\n"

// splitVerb finds the verb after any leading global flags and hands those
// flags to the verb, which parses globals wherever they appear.
func splitVerb(args []string) (string, []string, error) {
	fs := flag.NewFlagSet("pico", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&globalFlags{}).register(fs)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return "help", nil, nil
	} else if err != nil {
		return "", nil, &usageError{msg: flagMistake(fs, err), usage: seeHelp}
	}
	if fs.NArg() == 0 {
		return "", nil, &usageError{msg: "no command given", usage: usage}
	}
	leading := args[:len(args)-fs.NArg()]
	return fs.Arg(0), append(leading[:len(leading):len(leading)], fs.Args()[1:]...), nil
}

func runVerb(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch {
	case name == "help" && len(args) > 0 && args[0] == "serve":
		return &helpRequest{text: serveHelp()}
	case name == "help" && len(args) > 0 && args[0] == "probe":
		return &helpRequest{text: probeHelp()}
	case name == "help" && len(args) > 0 && verbs[args[0]] != nil:
		return runVerb(ctx, args[0], []string{"-h"}, stdin, stdout, stderr)
	case name == "help":
		return &helpRequest{text: usage}
	case name == "serve":
		return &usageError{msg: "serve takes no global flags before it", usage: "usage: pico serve [flags]\n"}
	}
	run, ok := verbs[name]
	if !ok {
		return unknownCommand(name)
	}
	return run(ctx, args, stdin, stdout, stderr)
}

// unknownCommand names the nearest command, if one is near.
func unknownCommand(name string) error {
	names := []string{"serve", "help", "probe"}
	for v := range verbs {
		names = append(names, v)
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if near := nearest(name, names); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return &usageError{msg: msg, usage: seeHelp}
}

// usageError is a command line that cannot run; it exits 2.
type usageError struct{ msg, usage string }

func (e *usageError) Error() string { return e.msg }

// helpRequest is -h or help; its text goes to stdout and it exits 0.
type helpRequest struct{ text string }

func (e *helpRequest) Error() string { return "help requested" }

// clientMain runs a client command for the process. An interrupt cancels
// the command; a second one kills the process the usual way.
func clientMain(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	return runClient(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}
