// The work a step's decisions cost (ADR 0128, ADR 0148): a step whose tiers declined writes its one
// `CompactionDecided` inside the step's own append, on a real SQLite file (one append is one
// `BEGIN IMMEDIATE` transaction). Counted, not timed: the appends each step makes and the events of each.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TemplateCompactor } from "@ctxlog/compaction"
import { ContextService, EventLog, Ids, Message, RecallSource, TokenCounter, type WindowEvent } from "@ctxlog/core"
import { SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { type Policy, Turn } from "../src/index.js"
import { countingOver } from "./support.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-turn-decisions-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const stack = (filename: string, appends: Array<ReadonlyArray<WindowEvent.EventType>>) =>
  ContextService.layer().pipe(
    Layer.provideMerge(countingOver({ appends: 0, reads: 0, batches: appends })),
    Layer.provideMerge(SqliteEventLog.layer({ filename })),
    Layer.provideMerge(
      Layer.mergeAll(
        TokenCounter.layerGpt(),
        Ids.layerUuidV7,
        RecallSource.layerEmpty,
        TemplateCompactor.layer({ maxBytes: 2048 })
      )
    )
  )

const policy: Policy.Policy = {
  builder: { provider: "openai", model: "gpt-4.1", contextWindow: 128_000, maxOutputTokens: 512 },
  render: {
    tools: [{ name: "read_file", description: "Read a file", inputSchema: { type: "object", properties: {} } }]
  },
  compaction: { softThreshold: 0.7, hardThreshold: 0.85, targetRatio: 0.45, cooldownTurns: 2 },
  seams: { level1: 0.5, level2: 0.7, level3: 0.9, verbatimWindow: 6 }
}

describe("decisions cost no transaction of their own", () => {
  it.effect("a turn of two model calls on SQLite: one append per step, every decision inside one", () => {
    const appends: Array<ReadonlyArray<WindowEvent.EventType>> = []
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "decisions-work"
      yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
      appends.length = 0
      yield* Turn.prepare(stream, { messages: [Message.user("Read a.js and tell me what it does.")] }, policy)
      yield* Turn.render(stream, policy)
      yield* Turn.complete(
        stream,
        {
          answer: [Message.text("Reading it."), Message.toolCall("call_1", "read_file", { path: "a.js" })],
          results: [Message.toolResult("call_1", "export const a = 1")],
          endTurn: false
        },
        policy
      )
      yield* Turn.render(stream, policy, { iteration: 1 })
      yield* Turn.complete(stream, { answer: [Message.text("It exports a.")], endTurn: true }, policy)
      // Five steps, five appends (five SQLite transactions): the decisions add events, never appends.
      assert.strictEqual(appends.length, 5, JSON.stringify(appends))
      const decided = appends.filter((tags) => tags.includes("CompactionDecided"))
      // Every step but the tool round's complete evaluated something that declined: prepare (the soft
      // tier), both renders (the seams; the second also the soft tier between calls), the turn's complete.
      assert.strictEqual(decided.length, 4, JSON.stringify(appends))
      for (const tags of decided) {
        assert.strictEqual(tags.filter((tag) => tag === "CompactionDecided").length, 1, JSON.stringify(tags))
        assert.isAbove(tags.length, 1, `a decision in an append of its own: ${JSON.stringify(tags)}`)
      }
      // The render's evaluations are folded: one event holds the soft tier's and the seams' (ADR 0148).
      const log = yield* EventLog.EventLog
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
      const folded = events.flatMap(({ event }) =>
        event._tag === "CompactionDecided" ? [`${event.step}:${event.decisions.map((d) => d.tier).join("+")}`] : []
      )
      assert.deepStrictEqual(folded, ["prepare:soft", "render:seam", "render:soft+seam", "complete:proactive"])
    }).pipe(Effect.provide(stack(join(dir, "work.db"), appends)))
  })
})
