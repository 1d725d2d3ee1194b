/**
 * The Anthropic builder's render cache, by counting work: a turn that appends a few messages to a 1k or
 * 10k message window renders only those (no old message rendered again, no render from scratch), hashes
 * about the bytes it adds, and still builds the same request, to the byte and to the hash, as a render
 * from scratch. A changed prefix (a trim) or a new task state falls back and stays exact.
 */
import { EventHash, Message, Window, type WindowEvent, WorkCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { AnthropicCtx, RenderRecord } from "../src/index.js"
import * as anthropicRender from "../src/internal/anthropicRender.js"
import { counters as metrics } from "../src/internal/renderCounters.js"
import { fromWindow } from "../src/internal/sections.js"

/** The renders' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

const prose = (i: number): string => `message ${i}: ${"lorem ipsum dolor sit amet ".repeat(4 + (i % 5))}`

let next = 0
const appended = (message: Omit<Message.Message, "id" | "tokens">): WindowEvent.WindowEvent => {
  next++
  return {
    _tag: "MessageAppended",
    id: `event-${next}`,
    message: { id: `message-${next}`, tokens: 20, ...message }
  }
}

const user = (i: number) => appended({ role: "user", kind: "chat", parts: [Message.text(prose(i))] })
const assistant = (i: number) => appended({ role: "assistant", kind: "chat", parts: [Message.text(prose(i))] })
/** An assistant tool call and its result: two messages, one tool round. */
const toolRound = (i: number): ReadonlyArray<WindowEvent.WindowEvent> => [
  appended({
    role: "assistant",
    kind: "chat",
    parts: [Message.text(prose(i)), Message.toolCall(`call_${i}`, "read_file", { path: `f${i}.ts` })]
  }),
  appended({ role: "tool", kind: "chat", parts: [Message.toolResult(`call_${i}`, `contents of f${i}.ts`)] })
]

const windowOf = (size: number): Window.Window => {
  const events: Array<WindowEvent.WindowEvent> = []
  for (let i = 0; events.length < size; i++) {
    events.push(user(i))
    if (i % 7 === 3) events.push(...toolRound(i))
    events.push(assistant(i))
  }
  return Window.replay(events)
}

const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5", minCacheableTokens: 100 })
const options = { turnReminder: "be brief", maxOutputTokens: 1024 }

/** The request a render from scratch gives, and its body. */
const fromScratch = (window: Window.Window) => {
  const rendered = anthropicRender.render(fromWindow(window, undefined), {
    model: "claude-sonnet-4-5",
    maxTokens: 1024,
    reminder: options.turnReminder,
    minCacheableTokens: 100,
    cache: true
  })
  if (Either.isLeft(rendered)) throw new Error(rendered.left.message)
  return JSON.stringify(rendered.right.request)
}

const build = (window: Window.Window) => {
  const built = builder.build(window, options)
  if (Either.isLeft(built)) throw new Error(built.left.message)
  return built.right.request
}

const turns = (size: number) => {
  let window = windowOf(size)
  build(window)
  const perTurn: Array<{ rendered: number; newTurns: number; full: number; hashed: number; added: number }> = []
  for (let turn = 0; turn < 4; turn++) {
    const events =
      turn % 2 === 0 ? [user(size + turn), ...toolRound(size + turn)] : [user(size + turn), assistant(turn)]
    // The new history turns: the user's, then an assistant turn and its results, or a plain assistant turn.
    const newTurns = turn % 2 === 0 ? 3 : 2
    window = events.reduce(Window.evolve, window)
    reset()
    const request = build(window)
    const sha = RenderRecord.requestSha256(request)
    const added = events.reduce((total, event) => total + JSON.stringify(event).length, 0)
    perTurn.push({
      rendered: counters.turnsRendered,
      newTurns,
      full: counters.fullRenders,
      hashed: counters.charsHashed,
      added
    })
    const body = fromScratch(window)
    assert.strictEqual(JSON.stringify(request), body)
    assert.strictEqual(sha, EventHash.sha256(body))
  }
  return perTurn
}

describe("Anthropic render cache", () => {
  it("renders no old message again at 1k and 10k history messages, and hashes about the new bytes", () => {
    for (const size of [1000, 10_000]) {
      const perTurn = turns(size)
      console.log(`render cache at ${size} messages, per turn:`, JSON.stringify(perTurn))
      for (const turn of perTurn) {
        assert.strictEqual(turn.full, 0)
        // Only the new turns are rendered: old messages rendered again = 0.
        assert.strictEqual(turn.rendered - turn.newTurns, 0)
        // The previous turn's tail and reminder message are hashed again, not the window.
        assert.isBelow(turn.hashed, 4 * turn.added + 2000)
      }
    }
  })

  it("falls back to a render from scratch when the prefix changes, and stays exact", () => {
    let window = windowOf(200)
    build(window)
    const removed = window.history.slice(0, 10).map((message) => message.id)
    window = Window.evolve(window, { _tag: "HistoryTrimmed", id: "trim-1", budget: 1000, removedIds: removed })
    reset()
    const request = build(window)
    assert.isAbove(counters.turnsRendered, 100)
    assert.strictEqual(JSON.stringify(request), fromScratch(window))
    assert.strictEqual(RenderRecord.requestSha256(request), EventHash.sha256(fromScratch(window)))
  })

  it("gives the same error as a render from scratch for a window with a pending tool call", () => {
    let window = windowOf(50)
    build(window)
    window = Window.evolve(window, toolRound(999)[0] as WindowEvent.WindowEvent)
    const built = builder.build(window, options)
    assert.isTrue(Either.isLeft(built))
    if (Either.isLeft(built)) assert.include(built.left.message, "no result yet")
  })
})
