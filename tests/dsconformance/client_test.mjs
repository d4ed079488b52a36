// The official TypeScript client (@durable-streams/client) against the
// server at DS_URL: what an application does with it, beyond the suite's raw
// HTTP checks. client_test.go runs this file.
import { describe, expect, test } from "vitest"
import {
  DurableStream,
  IdempotentProducer,
  StaleEpochError,
  createFetchWithBackoff,
  stream,
} from "@durable-streams/client"

const baseUrl = process.env.DS_URL

// streamUrl gives every test its own stream, so reruns never collide.
function streamUrl(name) {
  const suffix = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`
  return `${baseUrl}/v1/stream/client-${name}-${suffix}`
}

// until resolves once check() holds, polling, or fails after ms.
async function until(check, ms = 5000, what = "condition") {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe("catch-up and resume", () => {
  test("reads back every append in order", async () => {
    const url = streamUrl("catchup")
    const handle = await DurableStream.create({ url, contentType: "text/plain", batching: false })
    for (const part of ["alpha ", "beta ", "gamma"]) await handle.append(part)

    const res = await stream({ url, live: false })
    expect(await res.text()).toBe("alpha beta gamma")
    expect(res.upToDate).toBe(true)
    expect(res.streamClosed).toBe(false)
  })

  test("resumes from a saved offset without repeating data", async () => {
    const url = streamUrl("resume")
    const handle = await DurableStream.create({ url, contentType: "application/json", batching: false })
    await handle.append(JSON.stringify({ n: 1 }))
    await handle.append(JSON.stringify({ n: 2 }))

    const first = await stream({ url, live: false })
    expect(await first.json()).toEqual([{ n: 1 }, { n: 2 }])
    const saved = first.offset

    await handle.append(JSON.stringify({ n: 3 }))
    const resumed = await stream({ url, offset: saved, live: false })
    expect(await resumed.json()).toEqual([{ n: 3 }])

    // HEAD reports the same tail the reader ended at.
    const head = await handle.head()
    expect(head.exists).toBe(true)
    expect(head.offset).toBe(resumed.offset)
  })

  test("a missing stream is reported as such", async () => {
    const head = await DurableStream.head({ url: streamUrl("missing") })
    expect(head.exists).toBe(false)
  })
})

describe("live subscriptions", () => {
  for (const live of ["long-poll", "sse"]) {
    test(`${live}: a subscriber sees appends made after it started`, async () => {
      const url = streamUrl(live)
      const handle = await DurableStream.create({ url, contentType: "application/json", batching: false })
      await handle.append(JSON.stringify({ n: 0 }))

      const res = await stream({ url, live })
      const seen = []
      res.subscribeJson(async (batch) => {
        seen.push(...batch.items)
      })
      try {
        await until(() => seen.length >= 1, 5000, "the catch-up item")
        for (let n = 1; n <= 3; n++) {
          await handle.append(JSON.stringify({ n }))
          await until(() => seen.length >= n + 1, 5000, `live item ${n}`)
        }
        expect(seen).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }])
        expect(res.live).toBe(live)
      } finally {
        res.cancel()
      }
    })

    test(`${live}: a subscriber learns that the stream closed`, async () => {
      const url = streamUrl(`${live}-close`)
      const handle = await DurableStream.create({ url, contentType: "text/plain", batching: false })
      await handle.append("before ")

      const res = await stream({ url, live })
      let text = ""
      let closed = false
      res.subscribeText(async (chunk) => {
        text += chunk.text
        closed ||= chunk.streamClosed
      })
      try {
        await until(() => text === "before ", 5000, "the catch-up text")
        await handle.close({ body: "last" })
        await until(() => closed, 5000, "streamClosed")
        expect(text).toBe("before last")
        // DurableStream.append reports the closed stream as a plain 409.
        await expect(handle.append("late")).rejects.toMatchObject({ status: 409 })
      } finally {
        res.cancel()
      }
    })
  }
})

describe("idempotent producer", () => {
  test("writes each item once, even when a batch is resent", async () => {
    const url = streamUrl("producer")
    const handle = await DurableStream.create({ url, contentType: "application/json" })
    const errors = []
    const producer = new IdempotentProducer(handle, "client-test", { lingerMs: 2, onError: (e) => errors.push(e) })
    const items = Array.from({ length: 200 }, (_, n) => ({ n }))
    for (const item of items) producer.append(JSON.stringify(item))
    await producer.flush()
    expect(errors).toEqual([])

    // A network retry of the producer's first batch (epoch 0, seq 0) is a
    // duplicate: acknowledged with 204, not written again. The client has no
    // call that resends a batch, so this is the raw request it would repeat.
    const retry = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "producer-id": "client-test",
        "producer-epoch": "0",
        "producer-seq": "0",
      },
      body: JSON.stringify([{ n: "retry" }]),
    })
    expect(retry.status).toBe(204)
    expect(await (await stream({ url, live: false })).json()).toEqual(items)

    const result = await producer.close()
    expect(result.finalOffset).toBeTruthy()
    const head = await handle.head()
    expect(head.streamClosed).toBe(true)
    expect(head.offset).toBe(result.finalOffset)
  })

  test("a restarted producer fences the older epoch", async () => {
    const url = streamUrl("fence")
    const handle = await DurableStream.create({ url, contentType: "text/plain" })
    const oldErrors = []
    const old = new IdempotentProducer(handle, "writer", { onError: (e) => oldErrors.push(e) })
    old.append("a")
    await old.flush()

    const next = new IdempotentProducer(handle, "writer", { epoch: 1 })
    next.append("b")
    await next.flush()

    old.append("zombie")
    await old.flush().catch(() => {})
    expect(oldErrors.some((e) => e instanceof StaleEpochError)).toBe(true)
    expect(await (await stream({ url, live: false })).text()).toBe("ab")
    await next.detach()
  })
})

// inject arms a fault through the server's test hook (pico serve
// --test-fault-injection); clear disarms them all.
async function inject(url, fault) {
  const res = await fetch(`${baseUrl}/_test/inject-error`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path: new URL(url).pathname, ...fault }),
  })
  expect(res.status).toBe(200)
}

async function clear() {
  expect((await fetch(`${baseUrl}/_test/inject-error`, { method: "DELETE" })).status).toBe(200)
}

// quick retries, so that faulted requests cost the tests little time.
const backoffOptions = { initialDelay: 10, maxDelay: 50, multiplier: 2, maxRetries: 5 }

describe("through faults at the edge", () => {
  test("a read retries through answers of 503 and returns every record", async () => {
    const url = streamUrl("fault-503")
    const handle = await DurableStream.create({ url, contentType: "text/plain", batching: false })
    await handle.append("kept")
    await inject(url, { status: 503, count: 2, retryAfter: 0, method: "GET" })
    try {
      const res = await stream({ url, live: false, backoffOptions })
      expect(await res.text()).toBe("kept")
    } finally {
      await clear()
    }
  })

  test("a read retries through a dropped connection", async () => {
    const url = streamUrl("fault-drop")
    const handle = await DurableStream.create({ url, contentType: "application/json", batching: false })
    await handle.append(JSON.stringify({ n: 1 }))
    await inject(url, { dropConnection: true, method: "GET" })
    try {
      const res = await stream({ url, live: false, backoffOptions })
      expect(await res.json()).toEqual([{ n: 1 }])
    } finally {
      await clear()
    }
  })

  test("a producer's batch refused with 503 is sent again and written once", async () => {
    const url = streamUrl("fault-producer")
    const handle = await DurableStream.create({ url, contentType: "application/json" })
    const errors = []
    // The producer retries only through the fetch it is given.
    const producer = new IdempotentProducer(handle, "faulted", {
      lingerMs: 1,
      fetch: createFetchWithBackoff(fetch, backoffOptions),
      onError: (e) => errors.push(e),
    })
    await inject(url, { status: 503, count: 1, method: "POST" })
    try {
      for (let n = 0; n < 10; n++) producer.append(JSON.stringify({ n }))
      await producer.flush()
      expect(errors).toEqual([])
      expect(await (await stream({ url, live: false })).json()).toEqual(Array.from({ length: 10 }, (_, n) => ({ n })))
    } finally {
      await clear()
      await producer.detach()
    }
  })

  test("a cut JSON answer is an error, not fewer records", async () => {
    const url = streamUrl("fault-truncate")
    const handle = await DurableStream.create({ url, contentType: "application/json", batching: false })
    await handle.append(JSON.stringify({ text: "long enough to be cut in the middle" }))
    await inject(url, { truncateBodyBytes: 12, method: "GET" })
    try {
      const res = await stream({ url, live: false })
      await expect(res.json()).rejects.toThrow()
      // The next read is whole again.
      expect(await (await stream({ url, live: false })).json()).toEqual([{ text: "long enough to be cut in the middle" }])
    } finally {
      await clear()
    }
  })

  test("an SSE subscriber passes over an event type it does not know", async () => {
    const url = streamUrl("fault-sse-event")
    const handle = await DurableStream.create({ url, contentType: "text/plain", batching: false })
    await handle.append("first ")
    await inject(url, { injectSseEvent: { eventType: "surprise", data: "ignore me" }, method: "GET" })
    const res = await stream({ url, live: "sse" })
    let text = ""
    res.subscribeText(async (chunk) => {
      text += chunk.text
    })
    try {
      await until(() => text === "first ", 5000, "the catch-up text")
      await handle.append("second")
      await until(() => text === "first second", 5000, "the live text")
    } finally {
      res.cancel()
      await clear()
    }
  })
})
