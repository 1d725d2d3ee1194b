/**
 * The cost of the projection per event, counted, not timed: folding an event, deciding a command and
 * running a ContextService operation must cost the same at 10k history messages as at 1k. The counters
 * (`internal/work.ts`) count item and spine references copied, messages summed for totals, and items
 * materialized into arrays. An O(window) step per event (copying history, re-summing partitions,
 * rebuilding id sets) multiplies them by 10 between the two sizes; the tests allow 2.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ContextService, Decide, Message, Window, type WindowEvent, WorkCounter } from "../src/index.js"
import { work as counters } from "../src/internal/work.js"

/** The projection's work counters, read as their change since the last `work.reset()`. */
const work = WorkCounter.since(counters)

/** A realistic log of `size` messages: turns of user, assistant tool call, tool result, answer; pruning, trims, compactions. */
const log = (size: number): Array<WindowEvent.WindowEvent> => {
  const events: Array<WindowEvent.WindowEvent> = []
  let n = 0
  const id = () => `e${n++}`
  const append = (message: Message.Message) => events.push({ _tag: "MessageAppended", id: id(), message })
  let messages = 0
  for (let turn = 0; messages < size; turn++) {
    const call = `call${turn}`
    append({ id: `u${turn}`, role: "user", kind: "chat", parts: [Message.text("fix it")], tokens: 5 })
    append({
      id: `a${turn}`,
      role: "assistant",
      kind: "chat",
      parts: [Message.toolCall(call, "read", { turn })],
      tokens: 8
    })
    append({
      id: `t${turn}`,
      role: "tool",
      kind: "chat",
      parts: [Message.toolResult(call, "x".repeat(200))],
      tokens: 60
    })
    append({ id: `r${turn}`, role: "assistant", kind: "chat", parts: [Message.text("done")], tokens: 4 })
    messages += 4
    if (turn % 5 === 4) {
      const old = turn - 3
      events.push({
        _tag: "ToolOutputPruned",
        id: id(),
        outputs: [{ messageId: `t${old}`, toolCallId: `call${old}`, content: "[pruned]", tokens: 6 }]
      })
    }
    if (turn % 25 === 24) events.push({ _tag: "TurnCompleted", id: id() })
  }
  return events
}

/** The counters per event for folding `events` one by one from `from`. */
const perEvent = (from: Window.Window, events: ReadonlyArray<WindowEvent.WindowEvent>) => {
  work.reset()
  let window = from
  for (const event of events) window = Window.evolve(window, event)
  const count = events.length
  return {
    window,
    copied: work.copied / count,
    spine: work.spine / count,
    summed: work.summed / count,
    materialized: work.materialized
  }
}

const ratio = (large: number, small: number) => (large + 1) / (small + 1)

describe("cost per event", () => {
  const small = log(1_000)
  const large = log(10_000)
  // The same 200 events folded on top of a 1k and a 10k window.
  const tail = log(10_200).slice(large.length)

  it("folding an event costs the same at 10k messages as at 1k", () => {
    const at1k = perEvent(Window.replay(small), tail)
    const at10k = perEvent(Window.replay(large), tail)
    assert.isBelow(ratio(at10k.copied, at1k.copied), 2, `items copied per event: ${at1k.copied} → ${at10k.copied}`)
    assert.isBelow(ratio(at10k.summed, at1k.summed), 2, `messages summed per event: ${at1k.summed} → ${at10k.summed}`)
    // The spine (one reference per 128 messages) is copied once every 128 appends and by each rewrite.
    assert.isBelow(at10k.spine, 20, `spine references per event at 10k: ${at10k.spine}`)
    // Nothing was turned into an array on the way.
    assert.strictEqual(at10k.materialized, 0)
  })

  it("replaying a 10k log costs 10x a 1k log, not 100x", () => {
    work.reset()
    Window.replay(small)
    const smallWork = work.copied + work.spine + work.summed
    work.reset()
    Window.replay(large)
    const largeWork = work.copied + work.spine + work.summed
    assert.isBelow(largeWork / smallWork, 20, `work ${smallWork} → ${largeWork}`)
  })

  it("deciding an append or a trim reads indexes, not the history", () => {
    const window = Window.replay(large)
    work.reset()
    const next: Message.Message = { id: "new", role: "user", kind: "chat", parts: [Message.text("hi")], tokens: 3 }
    assert.isTrue(Either.isRight(Decide.decide(window, { _tag: "AppendMessages", messages: [next] })))
    // Trimming 1% of the window walks the oldest groups only.
    const plan = Decide.trimPlan(window, window.tokens.total - 100)
    assert.isAbove(plan.length, 0)
    assert.strictEqual(work.materialized + work.copied + work.summed, 0)
  })

  it.effect("a ContextService append on a 10k window copies nothing of it", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      // 10k messages in batches, then one more: the cached window is used, not reloaded or materialized.
      for (let batch = 0; batch < 20; batch++) {
        yield* ctx.appendMessages(
          "s",
          Array.from({ length: 500 }, (_, i) => Message.user(`message ${batch * 500 + i}`))
        )
      }
      work.reset()
      const outcome = yield* ctx.appendMessages("s", [Message.user("one more")])
      assert.strictEqual(outcome.window.version, 10_001)
      assert.isBelow(work.copied + work.spine, 100)
      assert.strictEqual(work.materialized + work.summed, 0)
    }).pipe(Effect.provide(ContextService.layerMemory()))
  )
})
