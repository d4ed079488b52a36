// Package scale measures a node holding many streams, from outside: it
// runs the real binary, creates streams over HTTP, lets them idle,
// restarts the node and stops it, and prints what each step cost; it
// times how long an acknowledged append takes to reach many live readers;
// and, in process, it measures what one delivery to a live reader costs
// the server (BenchmarkLiveDeliveryCost).
// These are benchmarks, run on demand (see the README), not part of the
// test run.
package scale
