package main

import (
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
  help     this text; help <command> for its flags

global flags, before or after the command (flag, then env, then profile):
  --endpoint URL       PICO_ENDPOINT (default http://127.0.0.1:4437)
  --protocol pico|ds   PICO_PROTOCOL (default pico)
  --http2              PICO_HTTP2
  --profile NAME       PICO_PROFILE
  --token TOKEN        PICO_TOKEN (else the profile's, from pico auth login)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "probe":
		os.Exit(probe(os.Args[2:]))
	default:
		os.Exit(clientMain(os.Args[1:]))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pico %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
