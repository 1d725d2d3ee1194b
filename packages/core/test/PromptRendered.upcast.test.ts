// PromptRendered v1 (provider, model, tokens, sha256 only) in an old log: it decodes as a v2 event with no
// render spec, and replays like any render (it clears the signals raised before it).
import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { EventCodec, Window, WindowEvent } from "../src/index.js"

describe("PromptRendered v1 upcasting", () => {
  const fixture = readFileSync(new URL("./fixtures/prompt-rendered-v1.jsonl", import.meta.url), "utf8")

  it("the current PromptRendered schema version is 5", () => {
    assert.strictEqual(WindowEvent.schemaVersions.PromptRendered, 5)
  })

  it.effect("a v1 render decodes without a render spec and replays (signals cleared)", () =>
    Effect.gen(function* () {
      const events = yield* EventCodec.decodeJsonLines(fixture)
      assert.strictEqual(events.length, 5)
      const render = events[3]
      assert.strictEqual(render?._tag, "PromptRendered")
      if (render?._tag !== "PromptRendered") return
      assert.strictEqual(render.render, undefined)
      assert.strictEqual(render.blobs, undefined)
      assert.strictEqual(render.sha256.length, 64)
      assert.strictEqual(Window.replay(events.slice(0, 3)).signals.length, 1)
      const window = Window.replay(events)
      assert.deepStrictEqual(window.signals, [])
      assert.strictEqual(window.version, 5)
      assert.strictEqual(window.compaction.turn, 1)
    })
  )

  it.effect("a v1 render that carries v2 fields is stripped to v1 (an old writer cannot claim a spec)", () =>
    Effect.gen(function* () {
      const data = JSON.stringify({
        _tag: "PromptRendered",
        id: "p04",
        provider: "openai",
        model: "gpt-4.1",
        tokens: { system: 5, knowledge: 0, taskState: 0, signals: 4, history: 2, total: 11 },
        sha256: "f".repeat(64),
        render: { builder: "openai", config: { model: "x" } }
      })
      const event = yield* EventCodec.decode({ type: "PromptRendered", schemaVersion: 1, data })
      assert.strictEqual(event._tag === "PromptRendered" ? event.render : "other", undefined)
    })
  )

  it.effect("a v2 render with a spec and blobs round-trips through encode and decode", () =>
    Effect.gen(function* () {
      const event: WindowEvent.WindowEvent = {
        _tag: "PromptRendered",
        id: "r1",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        tokens: { system: 1, knowledge: 0, taskState: 0, signals: 0, history: 2, total: 3 },
        sha256: "a".repeat(64),
        render: { builder: "anthropic", config: { model: "claude-sonnet-4-5" }, toolsSha256: "b".repeat(64) },
        blobs: [{ sha256: "b".repeat(64), content: "[]" }]
      }
      const [stored] = yield* EventCodec.encodeAll([event])
      assert.strictEqual(stored?.schemaVersion, WindowEvent.schemaVersions.PromptRendered)
      if (stored === undefined) return
      assert.deepStrictEqual(yield* EventCodec.decode(stored), event)
    })
  )

  it.effect("v3 records server-side context management; a v2 render has none (a stray field is dropped)", () =>
    Effect.gen(function* () {
      const event: WindowEvent.WindowEvent = {
        _tag: "PromptRendered",
        id: "r3",
        provider: "openai",
        model: "gpt-5",
        tokens: { system: 1, knowledge: 0, taskState: 0, signals: 0, history: 2, total: 3 },
        sha256: "c".repeat(64),
        serverContext: { previousResponseId: "resp_1", store: true, compactThreshold: 200000 }
      }
      const [stored] = yield* EventCodec.encodeAll([event])
      assert.strictEqual(stored?.schemaVersion, 5)
      if (stored === undefined) return
      assert.deepStrictEqual(yield* EventCodec.decode(stored), event)
      const v2 = yield* EventCodec.decode({ ...stored, schemaVersion: 2 })
      assert.strictEqual(v2._tag === "PromptRendered" ? v2.serverContext : "other", undefined)
    })
  )

  it.effect("v4 records thinking-block clearing; a v3 render asked for none (a stray field is dropped)", () =>
    Effect.gen(function* () {
      const event: WindowEvent.WindowEvent = {
        _tag: "PromptRendered",
        id: "r4",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        tokens: { system: 1, knowledge: 0, taskState: 0, signals: 0, history: 2, total: 3 },
        sha256: "d".repeat(64),
        serverContext: { clearToolUses: { keepToolUses: 3 }, clearThinking: { keepThinkingTurns: "all" } }
      }
      const [stored] = yield* EventCodec.encodeAll([event])
      assert.strictEqual(stored?.schemaVersion, 5)
      if (stored === undefined) return
      assert.deepStrictEqual(yield* EventCodec.decode(stored), event)
      const v3 = yield* EventCodec.decode({ ...stored, schemaVersion: 3 })
      assert.deepStrictEqual(v3._tag === "PromptRendered" ? v3.serverContext : "other", {
        clearToolUses: { keepToolUses: 3 }
      })
    })
  )

  it.effect(
    "v5 records the caller's cache hints in the render spec; a v4 render had none (a stray field is dropped)",
    () =>
      Effect.gen(function* () {
        const event: WindowEvent.WindowEvent = {
          _tag: "PromptRendered",
          id: "r5",
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          tokens: { system: 1, knowledge: 0, taskState: 0, signals: 0, history: 2, total: 3 },
          sha256: "e".repeat(64),
          render: {
            builder: "anthropic",
            config: { model: "claude-sonnet-4-5" },
            cacheHints: [{ messageId: "m-system" }, { messageId: "m-2", ttl: "1h" }]
          }
        }
        const [stored] = yield* EventCodec.encodeAll([event])
        assert.strictEqual(stored?.schemaVersion, 5)
        if (stored === undefined) return
        assert.deepStrictEqual(yield* EventCodec.decode(stored), event)
        const v4 = yield* EventCodec.decode({ ...stored, schemaVersion: 4 })
        assert.deepStrictEqual(v4._tag === "PromptRendered" ? v4.render : "other", {
          builder: "anthropic",
          config: { model: "claude-sonnet-4-5" }
        })
      })
  )

  it.effect("a stored v4 render with a spec (no cache hints) still decodes, its spec unchanged", () =>
    Effect.gen(function* () {
      const line = readFileSync(new URL("./fixtures/events-by-version.jsonl", import.meta.url), "utf8")
        .split("\n")
        .find((entry) => entry.includes('"id":"sample-15-v4r"'))
      assert.isDefined(line)
      if (line === undefined) return
      const stored: { type: string; schemaVersion: number; data: unknown } = JSON.parse(line)
      assert.strictEqual(stored.schemaVersion, 4)
      const event = yield* EventCodec.decode({ ...stored, data: JSON.stringify(stored.data) })
      assert.deepStrictEqual(event, stored.data)
    })
  )
})
