package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
)

// Exit codes, so that scripts can tell failures apart; pico help and the
// README list them.
const (
	exitOK       = 0
	exitFailure  = 1 // anything not below
	exitUsage    = 2 // the command line cannot run
	exitNotFound = 3 // no such stream, node or token (404)
	exitConflict = 4 // the state refused it: exists, closed, a failed match, a fenced producer (409, 412)
	exitAuth     = 5 // no valid credential, or one without the scope (401, 403)
)

// report prints err and maps it to the exit code. name is the verb.
func report(ctx context.Context, name string, err error, stdout, stderr io.Writer) int {
	var help *helpRequest
	var bad *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &help):
		fmt.Fprint(stdout, help.text)
		return exitOK
	case errors.As(err, &bad):
		fmt.Fprintf(stderr, "pico: %s\n%s", bad.msg, bad.usage)
		return exitUsage
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "pico: interrupted")
		return exitFailure
	}
	var mismatch *protocolMismatch
	if errors.As(err, &mismatch) {
		fmt.Fprintln(stderr, "pico: "+mismatch.Error())
		return exitUsage
	}
	if msg, ok := unreachable(name, err); ok {
		fmt.Fprintln(stderr, "pico: "+msg)
		return exitFailure
	}
	fmt.Fprintf(stderr, "pico: %v\n", err)
	if httpStatus(err) == http.StatusUnauthorized {
		fmt.Fprintln(stderr, "pico: the server wants a valid token: --token, PICO_TOKEN or pico auth login (pico auth status checks one)")
	}
	return exitCode(httpStatus(err))
}

// exitCode is the exit code of a failure the server answered with status.
func exitCode(status int) int {
	switch status {
	case http.StatusNotFound:
		return exitNotFound
	case http.StatusConflict, http.StatusPreconditionFailed:
		return exitConflict
	case http.StatusUnauthorized, http.StatusForbidden:
		return exitAuth
	}
	return exitFailure
}

// unreachable says what to do when err is a failure to connect: which
// server was tried and which setting names another.
func unreachable(verb string, err error) (string, bool) {
	var op *net.OpError
	var ue *url.Error
	if !errors.As(err, &op) || op.Op != "dial" || !errors.As(err, &ue) {
		return "", false
	}
	server := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		server = u.Scheme + "://" + u.Host
	}
	cause := op.Err.Error()
	if errors.Is(err, syscall.ECONNREFUSED) {
		cause = "connection refused"
	}
	setting := "--endpoint or PICO_ENDPOINT"
	if verb == "admin" {
		setting = "--admin-endpoint or PICO_ADMIN_ENDPOINT"
	}
	return fmt.Sprintf("cannot reach %s: %s (is pico serve running? %s names the server)", server, cause, setting), true
}
