// Starts the Durable Streams Node reference server (@durable-streams/server)
// on a free loopback port and prints "reference server on URL". It runs until
// SIGINT/SIGTERM or, when its standard input is a pipe, until that pipe
// closes, so a parent that dies (a Go test) never leaves it behind.
//
// Usage: node ref-server.mjs [--memory] [--long-poll-ms N] [--webhooks]
//   default       file-backed store in a fresh temporary directory, removed on exit
//   --memory      in-memory store
//   --long-poll-ms  server long-poll timeout (default 500, as the suite needs)
//   --webhooks    accept type=webhook subscriptions (the suite's subscription group)
import { fstatSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { DurableStreamTestServer } from "@durable-streams/server"

const { values } = parseArgs({
  options: {
    memory: { type: "boolean", default: false },
    "long-poll-ms": { type: "string", default: "500" },
    webhooks: { type: "boolean", default: false },
  },
})

const dataDir = values.memory ? undefined : mkdtempSync(join(tmpdir(), "ds-ref-"))
const server = new DurableStreamTestServer({
  port: 0,
  host: "127.0.0.1",
  longPollTimeout: Number(values["long-poll-ms"]),
  webhooks: values.webhooks,
  dataDir,
})
const url = await server.start()
console.log(`reference server on ${url} (${dataDir ? "file store" : "memory store"})`)

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  await server.stop().catch(() => {})
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  process.exit(0)
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
if (fstatSync(0).isFIFO()) {
  process.stdin.on("end", stop)
  process.stdin.on("error", stop)
  process.stdin.resume()
}
