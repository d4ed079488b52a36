// The Durable Streams server conformance suite against the server at DS_URL
// (an origin: the suite adds /v1/stream/…). conformance_test.go runs it. The
// suite's describe groups sit at the top level, so a test's name is its group
// path and title, as in not_yet.txt.
import { runConformanceTests } from "@durable-streams/server-conformance-tests"

runConformanceTests({
  baseUrl: process.env.DS_URL,
  // Only sets vitest's timeout of the live tests (value + 1 s); it must stay
  // above the server's long-poll timeout.
  longPollTimeoutMs: Number(process.env.DS_LP_MS ?? 1500),
  subscriptions: process.env.DS_SUBS === "1",
})
