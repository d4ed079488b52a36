import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["conformance.test.mjs", "client_test.mjs"],
    // The suite's own long tests set their timeouts; this bounds the rest
    // (mostly under 1 s) with room for a slow object store.
    testTimeout: 10_000,
    hookTimeout: 10_000,
    // No file watching, no terminal tricks: these runs are driven by go test.
    watch: false,
  },
})
