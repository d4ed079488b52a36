package main

import (
	"errors"
	"fmt"
	"os"
)

const usage = `usage: pico [global flags] <command> [flags]

commands:
  serve    run a node (see pico serve -h)
  create   create a stream
  append   append stdin's lines to a stream
  read     print a stream's records
  tail     print the last records, -f to follow
  head     print a stream's offsets and settings
  ls       list streams (Pico only)
  trim     drop the records before a seq (Pico only)
  close    close a stream to appends
  delete   delete a stream
  config   manage saved profiles (set, get, ls, rm, use, path)
  auth     store, check or remove the profile's token (login, status, logout)
  admin    cluster, nodes, stream NAME, set-slots N, tokens (the admin listener)
  bench    append for a while and print throughput and latency
  probe    exit 0 when a node's /ready answers 200 (container healthchecks)
  version  print the version, the source revision and the Go version
  help     this text; help <command> (or <command> -h) for its flags

global flags, before or after the command (flag, then env, then profile):
  --endpoint URL       PICO_ENDPOINT (default http://127.0.0.1:4437)
  --protocol pico|ds   PICO_PROTOCOL (default pico)
  --http2              PICO_HTTP2
  --profile NAME       PICO_PROFILE
  --token TOKEN        PICO_TOKEN (else the profile's, from pico auth login)

exit codes:
  0  success
  1  any other failure (the server unreachable or failing, an I/O error)
  2  bad usage: an unknown command or flag, a wrong argument, the wrong
     --protocol for the server
  3  not found: no such stream, node or token (HTTP 404)
  4  conflict: the stream exists, is closed, a match failed or a
     producer is fenced (HTTP 409, 412)
  5  auth: no valid token, or one without the scope (HTTP 401, 403)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(exitUsage)
	}
	if os.Args[1] == "probe" {
		os.Exit(probe(os.Args[2:]))
	}
	if os.Args[1] != "serve" {
		os.Exit(clientMain(os.Args[1:]))
	}
	var help *helpRequest
	var bad *usageError
	switch err := serve(os.Args[2:]); {
	case err == nil:
	case errors.As(err, &help):
		fmt.Print(help.text)
	case errors.As(err, &bad):
		fmt.Fprintf(os.Stderr, "pico serve: %s\n%s", bad.msg, bad.usage)
		os.Exit(exitUsage)
	default:
		fmt.Fprintf(os.Stderr, "pico serve: %v\n", err)
		os.Exit(exitFailure)
	}
}
