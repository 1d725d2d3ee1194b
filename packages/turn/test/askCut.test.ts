// Issue 39 (ADR 0124): a user ask too large for the window with the system prompt, the tools and the
// output reserve is cut by the turn's fit, the last stage: head and tail verbatim, the whole text in the
// file store (or, without one, in the log), one `UserAskCut` with its receipt; every render rebuilds.
import { ContextService, Message, Window } from "@ctxlog/core"
import { FileStore, SqliteEventLog } from "@ctxlog/memory"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Turn from "../src/Turn.js"
import type * as Policy from "../src/Policy.js"
import { eventsOf, rebuildAll, stack } from "./support.js"

/** Varied lines, so head and tail are distinguishable. */
const text = (seed: string, chars: number) => {
  let out = ""
  for (let line = 0; out.length < chars; line++) out += `${seed} line ${line}: value=${(line * 7919) % 1000}\n`
  return out.slice(0, chars)
}

const policy: Policy.Policy = {
  builder: { provider: "openai", model: "gpt-4.1", contextWindow: 2_000, maxOutputTokens: 512 },
  // The whole ask is appended (5,000 characters is under the input cut of `prepare` at this share), so
  // only the fit can make it fit.
  inputShare: 1,
  compaction: { softThreshold: 0.7, hardThreshold: 0.85, targetRatio: 0.45, cooldownTurns: 0 }
}

const ask = text("ask", 5_000)
const system = `You are a careful agent. ${text("rule", 1_200)}`

describe("the user's ask cut to fit (issue 39)", () => {
  it.effect("with a file store: head and tail kept, the whole text stored, one UserAskCut; renders rebuild", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const stream = "ask-cut-files"
        const durable = yield* SqliteEventLog.make({ filename: ":memory:" })
        const files = Context.get(durable, FileStore.FileStore)
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt(stream, system)
        const prepared = yield* Turn.prepare(stream, { messages: [Message.user(ask)] }, policy)
        const asked = Window.latestUserAsk(prepared.window) ?? ""
        assert.strictEqual(Message.textOf(Window.findMessage(prepared.window, asked) ?? Message.user("")), ask)
        const rendered = yield* Turn.render(stream, policy).pipe(Effect.provideService(FileStore.FileStore, files))
        assert.isTrue(Turn.fits(rendered.built))
        assert.include(rendered.tiers, "fit-cut-ask")
        const cuts = rendered.events.flatMap((event) => (event._tag === "UserAskCut" ? [event] : []))
        assert.strictEqual(cuts.length, 1)
        const [cut] = cuts
        assert.strictEqual(cut?.messageId, asked)
        assert.strictEqual(cut?.stored, FileStore.sha256Of(ask))
        assert.isAbove(cut?.receipt?.tokensBefore ?? 0, cut?.receipt?.tokensAfter ?? Infinity)
        assert.isAbove(cut?.receipt?.replacedTokens ?? 0, cut?.tokens ?? Infinity)
        // The ask is still the ask, holding its head and tail and the marker naming the stored text.
        assert.strictEqual(Window.latestUserAsk(rendered.window), asked)
        const kept = Message.textOf(Window.findMessage(rendered.window, asked) ?? Message.user(""))
        assert.isTrue(kept.startsWith(ask.slice(0, 200)), kept.slice(0, 300))
        assert.isTrue(kept.endsWith(ask.slice(-100)), kept.slice(-300))
        const short = FileStore.shortId(FileStore.sha256Of(ask))
        assert.include(kept, `stored output id=${short}`)
        assert.include(kept, `read_output {"id":"${short}"}`)
        assert.include(rendered.body, ask.slice(0, 200).replaceAll("\n", "\\n"))
        // The model can read it back whole.
        assert.strictEqual((yield* files.read(stream, short)).content, ask)
        // The next call of the turn fits without cutting again; every render rebuilds from the log.
        yield* Turn.complete(stream, { answer: [Message.text("On it.")], endTurn: false }, policy)
        const next = yield* Turn.render(stream, policy, { iteration: 1 })
        assert.notInclude(next.tiers, "fit-cut-ask")
        assert.deepStrictEqual(rebuildAll(yield* eventsOf(stream)), { renders: 2, failures: [] })
      })
    ).pipe(Effect.provide(stack()))
  )

  it.effect("without a file store: the marker says the log holds it, and the appended event does", () =>
    Effect.gen(function* () {
      const stream = "ask-cut-log"
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt(stream, system)
      yield* Turn.prepare(stream, { messages: [Message.user(ask)] }, policy)
      const rendered = yield* Turn.render(stream, policy)
      const [cut] = rendered.events.flatMap((event) => (event._tag === "UserAskCut" ? [event] : []))
      assert.isNull(cut?.stored)
      assert.include(cut?.parts[0]?.text ?? "", "the whole message is kept in the session's log")
      const events = yield* eventsOf(stream)
      const appended = events.flatMap(({ event }) =>
        event._tag === "MessageAppended" && event.message.id === cut?.messageId ? [event.message] : []
      )
      assert.strictEqual(Message.textOf(appended[0] ?? Message.user("")), ask)
      assert.deepStrictEqual(rebuildAll(events), { renders: 1, failures: [] })
    }).pipe(Effect.provide(stack()))
  )

  it.effect("a window too small even for the cut ask still fails typed, and writes nothing", () =>
    Effect.gen(function* () {
      const stream = "ask-cut-overflow"
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt(stream, `You are a careful agent. ${text("rule", 6_000)}`)
      const prepared = yield* Turn.prepare(stream, { messages: [Message.user(ask)] }, policy)
      const failed = yield* Effect.flip(Turn.render(stream, policy))
      assert.strictEqual(failed._tag, "WindowOverflow")
      assert.strictEqual((yield* ctx.load(stream)).version, prepared.window.version)
    }).pipe(Effect.provide(stack()))
  )
})

// ADR 0147: the unseen tool round's last resort. The answer carrying the call whose result the model has
// not seen yet is too large to fit (04-mini-swe-agent at 2,500 tokens): no stage may drop it, so the fit
// cuts its longest text to head and tail, the whole text in the file store, one `UnseenCut`.
describe("the unseen tool round cut to fit (ADR 0147)", () => {
  it.effect("the oversized answer of an unseen call: head and tail kept, the whole text readable, one UnseenCut", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const stream = "unseen-cut-files"
        const durable = yield* SqliteEventLog.make({ filename: ":memory:" })
        const files = Context.get(durable, FileStore.FileStore)
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt(stream, system)
        yield* Turn.prepare(stream, { messages: [Message.user("Fix the failing test.")] }, policy)
        yield* Turn.render(stream, policy).pipe(Effect.provideService(FileStore.FileStore, files))
        const thinking = text("plan", 5_000)
        yield* Turn.complete(
          stream,
          {
            answer: [Message.text(thinking), Message.toolCall("call_big", "bash", { command: "ls" })],
            results: [Message.toolResult("call_big", "a.js b.js")],
            endTurn: false
          },
          policy
        )
        const rendered = yield* Turn.render(stream, policy, { iteration: 1 }).pipe(
          Effect.provideService(FileStore.FileStore, files)
        )
        assert.isTrue(Turn.fits(rendered.built))
        assert.include(rendered.tiers, "fit-cut-unseen")
        // The fit's stages that ran and found nothing to do are the render's decisions (ADR 0148), folded
        // into its one CompactionDecided: the ask cut among them (the ask is short).
        const decided = rendered.events.flatMap((event) => (event._tag === "CompactionDecided" ? [event] : []))
        assert.strictEqual(decided.length, 1)
        const fit = decided[0]?.decisions.filter((decision) => decision.tier === "fit") ?? []
        assert.include(
          fit.map((decision) => decision.detail),
          "fit-cut-ask"
        )
        assert.isTrue(fit.every((decision) => decision.reason === "nothing-to-do"))
        const cuts = rendered.events.flatMap((event) => (event._tag === "UnseenCut" ? [event] : []))
        assert.strictEqual(cuts.length, 1)
        const [cut] = cuts
        assert.strictEqual(cut?.stored, FileStore.sha256Of(thinking))
        assert.isAbove(cut?.receipt?.tokensBefore ?? 0, cut?.receipt?.tokensAfter ?? Infinity)
        // The call and its result are both still in the render; the answer holds its head, tail and marker.
        const answer = Window.findMessage(rendered.window, cut?.messageId ?? "")
        assert.deepStrictEqual(
          Message.toolCallsOf(answer ?? Message.user("")).map((call) => call.id),
          ["call_big"]
        )
        assert.include(rendered.body, "call_big")
        assert.include(rendered.body, "a.js b.js")
        const kept = Message.textOf(answer ?? Message.user(""))
        assert.isTrue(kept.startsWith(thinking.slice(0, 200)))
        assert.isTrue(kept.endsWith(thinking.slice(-100)))
        const short = FileStore.shortId(FileStore.sha256Of(thinking))
        assert.include(kept, `read_output {"id":"${short}"}`)
        // The model can read all of it back.
        assert.strictEqual((yield* files.read(stream, short)).content, thinking)
        assert.deepStrictEqual(rebuildAll(yield* eventsOf(stream)), { renders: 2, failures: [] })
      })
    ).pipe(Effect.provide(stack()))
  )
})
