/**
 * The render cache of every builder (Anthropic, OpenAI Chat Completions, OpenAI Responses, Ollama, the
 * default one), by counting work: a turn that appends a few messages to a 1k or 10k message window
 * renders only the new turns (no old message rendered again, no render from scratch), hashes about the
 * bytes it adds, and gives the bytes of `JSON.stringify` of its request, the same request as a render
 * of an equal window made of new message objects (which the cache cannot reuse), and a render record
 * that `RenderRecord.verifyAll` rebuilds to the same hash.
 */
import { EventHash, Message, Window, type WindowEvent, WorkCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { CtxBuilder, RenderRecord } from "../src/index.js"
import { counters as metrics } from "../src/internal/renderCounters.js"
import { yieldToEventLoop } from "../../../vitest.property.js"

/** The renders' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

const prose = (i: number): string => `message ${i}: ${"lorem ipsum dolor sit amet ".repeat(4 + (i % 5))}`

let next = 0
const appended = (message: Omit<Message.Message, "id" | "tokens">): WindowEvent.WindowEvent => {
  next++
  return { _tag: "MessageAppended", id: `event-${next}`, message: { id: `message-${next}`, tokens: 20, ...message } }
}
const user = (i: number) => appended({ role: "user", kind: "chat", parts: [Message.text(prose(i))] })
const assistant = (i: number) => appended({ role: "assistant", kind: "chat", parts: [Message.text(prose(i))] })
const toolRound = (i: number): ReadonlyArray<WindowEvent.WindowEvent> => [
  appended({
    role: "assistant",
    kind: "chat",
    parts: [Message.text(prose(i)), Message.toolCall(`call_${i}`, "read_file", { path: `f${i}.ts` })]
  }),
  appended({ role: "tool", kind: "chat", parts: [Message.toolResult(`call_${i}`, `contents of f${i}.ts`)] })
]

const historyOf = (size: number): Array<WindowEvent.WindowEvent> => {
  const events: Array<WindowEvent.WindowEvent> = [
    appended({ role: "system", kind: "chat", parts: [Message.text("You are a careful coding agent.")] })
  ]
  for (let i = 0; events.length < size; i++) {
    events.push(user(i))
    if (i % 7 === 3) events.push(...toolRound(i))
    events.push(assistant(i))
  }
  return events
}

const configs: ReadonlyArray<CtxBuilder.ProviderConfig> = [
  { provider: "anthropic", model: "claude-sonnet-4-5", minCacheableTokens: 100 },
  { provider: "openai", model: "gpt-4o" },
  { provider: "openai", model: "o3", api: "responses" },
  { provider: "ollama", model: "llama3.2", contextWindow: 100_000_000 },
  { provider: "default", model: "local-model" }
]
const options: CtxBuilder.BuildOptions = {
  turnReminder: "be brief",
  maxOutputTokens: 1024,
  tools: [{ name: "read_file", description: "Read a file", inputSchema: { type: "object" } }]
}

const builderName = (config: CtxBuilder.ProviderConfig): string =>
  config.provider === "openai" && config.api === "responses" ? "openai-responses" : config.provider

describe("render cache of every builder", () => {
  for (const config of configs) {
    it(`${builderName(config)}: renders no old message again at 1k and 10k history messages, byte-identical and verifiable`, async () => {
      const builder = CtxBuilder.forProvider(config)
      const { spec, blobs } = RenderRecord.specOf({ config, options })
      for (const size of [1000, 10_000]) {
        // One turn of the event loop per size and per turn: seconds of synchronous work must not hold the
        // worker (vitest's RPC times out on a loaded machine).
        await yieldToEventLoop()
        const events = historyOf(size)
        let window = Window.replay(events)
        const build = (of: Window.Window) => {
          const built = builder.build(of, options)
          if (Either.isLeft(built)) throw new Error(built.left.message)
          return built.right
        }
        build(window)
        // Each render, after how many history events it came.
        const log: Array<{ readonly event: WindowEvent.WindowEvent; readonly after: number }> = []
        const bodies: Array<{ readonly whole: string; readonly events: number }> = []
        const perTurn: Array<{ rendered: number; full: number; hashed: number; added: number }> = []
        for (let turn = 0; turn < 4; turn++) {
          await yieldToEventLoop()
          const added =
            turn % 2 === 0 ? [user(size + turn), ...toolRound(size + turn)] : [user(size + turn), assistant(turn)]
          // The new history turns: the user's, then an assistant turn and its results, or a plain assistant turn.
          const newTurns = turn % 2 === 0 ? 3 : 2
          events.push(...added)
          window = added.reduce(Window.evolve, window)
          reset()
          const built = build(window)
          const sha = RenderRecord.requestSha256(built.request)
          const body = RenderRecord.serialize(built.request)
          perTurn.push({
            rendered: counters.turnsRendered - newTurns,
            full: counters.fullRenders,
            hashed: counters.charsHashed,
            added: added.reduce((total, event) => total + JSON.stringify(event).length, 0)
          })
          // The bytes: JSON.stringify of the request, and of a render of an equal window of new objects.
          const whole = JSON.stringify(built.request)
          assert.strictEqual(body, whole)
          assert.strictEqual(sha, EventHash.sha256(whole))
          bodies.push({ whole, events: events.length })
          log.push({
            event: {
              _tag: "PromptRendered",
              id: `render-${size}-${turn}`,
              provider: config.provider,
              model: config.model,
              tokens: built.stats.tokens,
              sha256: sha,
              render: spec,
              ...(turn === 0 ? { blobs } : {})
            },
            after: events.length
          })
        }
        console.log(`${builderName(config)} render cache at ${size} messages, per turn:`, JSON.stringify(perTurn))
        for (const turn of perTurn) {
          // Old messages rendered again: 0; no render from scratch.
          assert.strictEqual(turn.rendered, 0)
          assert.strictEqual(turn.full, 0)
          // The previous turn's tail and the reminder's message are hashed again, not the window.
          assert.isBelow(turn.hashed, 4 * turn.added + 2000)
        }
        // The same bytes as a render of an equal window of new message objects (which the cache cannot
        // reuse, so it renders it whole; done after the counting, as it replaces the cached state).
        for (const { whole, events: count } of bodies) {
          assert.strictEqual(JSON.stringify(build(Window.replay(events.slice(0, count))).request), whole)
        }
        // Every render record rebuilds from the log to the recorded hash.
        const withRenders: Array<{ readonly event: WindowEvent.WindowEvent; readonly version: number }> = []
        for (const [index, event] of events.entries()) {
          withRenders.push({ event, version: withRenders.length + 1 })
          for (const rendered of log) {
            if (rendered.after === index + 1)
              withRenders.push({ event: rendered.event, version: withRenders.length + 1 })
          }
        }
        const verification = RenderRecord.verifyAll(withRenders)
        assert.strictEqual(verification.renders, 4)
        assert.strictEqual(verification.verified, 4)
        assert.deepStrictEqual(verification.failures, [])
      }
    })
    it(`${builderName(config)}: a window the cache cannot prove valid gets the error of a render from scratch`, () => {
      const builder = CtxBuilder.forProvider(config)
      const events = historyOf(50)
      const window = Window.replay(events)
      assert.isTrue(Either.isRight(builder.build(window, options)))
      // A call without its result: the new messages alone do not keep the window valid.
      const pending = Window.evolve(window, toolRound(999)[0] as WindowEvent.WindowEvent)
      const built = builder.build(pending, options)
      assert.isTrue(Either.isLeft(built))
      if (Either.isLeft(built)) assert.include(built.left.message, "no result yet")
      // A result answering a call of the earlier history (`call_3`) that was already answered: a duplicate.
      const duplicate = Window.evolve(window, {
        _tag: "MessageAppended",
        id: "event-duplicate",
        message: {
          id: "message-duplicate",
          role: "tool",
          kind: "chat",
          parts: [Message.toolResult("call_3", "again")],
          tokens: 5
        }
      })
      const again = builder.build(duplicate, options)
      assert.isTrue(Either.isLeft(again))
      if (Either.isLeft(again)) assert.include(again.left.message, "more than once")
    })
  }
})
