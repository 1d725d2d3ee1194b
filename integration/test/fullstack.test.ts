// One end-to-end turn loop on a SQLite file: a real transcript imported turn by turn, tiered compaction
// at a 16k budget, the seam pipeline, Anthropic and OpenAI renders recorded each turn. Then the file is
// reopened and the log checked: same window, valid requests, an intact hash chain, no orphaned tool pairs.
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  ContextService,
  EventHash,
  EventLog,
  Ids,
  Message,
  RecallSource,
  TokenCounter,
  ToolPairs,
  Transcript,
  Window
} from "@ctxlog/core"
import { transcriptsDir } from "@ctxlog/core/testing"
import { TemplateCompactor, TieredCompaction } from "@ctxlog/compaction"
import { SqliteEventLog } from "@ctxlog/memory"
import { CtxBuilder, RenderRecord, RequestValidator } from "@ctxlog/providers"
import { SeamHost } from "@ctxlog/seam"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

const budget = 16_000
const stream = "fullstack"

const core = (filename: string) =>
  ContextService.layer.pipe(
    Layer.provideMerge(SqliteEventLog.layer({ filename })),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7, RecallSource.layerEmpty))
  )

// Seams are due from 12k active tokens on, above the Soft threshold of tiered compaction (70% of 16k)
// and below its Hard one (85%): the soft tier runs first, then seams fold what it could not shed.
const live = (filename: string) =>
  SeamHost.layer({ thresholds: { level1: 12_000, level2: 13_000, level3: 14_000 } }).pipe(
    Layer.provideMerge(TemplateCompactor.layer()),
    Layer.provideMerge(core(filename))
  )

const builders = [
  CtxBuilder.forProvider({ provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: budget }),
  CtxBuilder.forProvider({ provider: "openai", model: "gpt-4.1", contextWindow: budget })
]

/**
 * Agent turns: the system prompt apart, then each assistant message with the tool results that follow
 * it (user messages join the turn of the next assistant message).
 */
const turnsOf = (messages: ReadonlyArray<Message.MessageInput>) => {
  const system = messages.filter((message) => message.role === "system")
  const turns: Array<Array<Message.MessageInput>> = []
  let current: Array<Message.MessageInput> = []
  messages.forEach((message, index) => {
    if (message.role === "system") return
    current.push(message)
    const next = messages[index + 1]
    if (message.role !== "user" && next?.role !== "tool") {
      turns.push(current)
      current = []
    }
  })
  if (current.length > 0) turns.push(current)
  return { system, turns }
}

/** The request's own adjacency rules, checked again outside the builder. */
const validate = (request: CtxBuilder.RenderedRequest) =>
  "stream_options" in request
    ? RequestValidator.chatCompletions(request)
    : "input" in request
      ? RequestValidator.responses(request)
      : RequestValidator.anthropic(request)

describe("full stack on SQLite", () => {
  it.live(
    "a transcript turn by turn: compaction, seams, renders; the reopened log matches and verifies",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "ctxlog-fullstack-"))
      const filename = join(dir, "events.db")
      return Effect.gen(function* () {
        const json: unknown = JSON.parse(
          readFileSync(join(transcriptsDir(), "04-mini-swe-agent-django-11910.json"), "utf8")
        )
        const { system, turns } = turnsOf(yield* Transcript.fromTranscriptJson(json))
        assert.isAbove(turns.length, 20)

        const run = yield* Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          let window = (yield* ctx.setSystemPrompt(stream, system.map((message) => Message.textOf(message)).join("\n")))
            .window
          const compactions: Array<string> = []
          const seamActions: Array<string> = []
          const invalid: Array<string> = []
          const rendered: Array<CtxBuilder.RenderedRequest> = []
          const manualAt = Math.floor(turns.length / 2)
          for (const [index, turn] of turns.entries()) {
            yield* ctx.appendMessages(stream, turn)
            // Once, halfway: a manual compaction (a user's "/compact"), which the automatic tiers never reach here.
            if (index === manualAt) compactions.push((yield* TieredCompaction.compactContext(stream))._tag)
            const compacted = yield* TieredCompaction.maybeCompact(stream, { budget })
            compactions.push(compacted._tag)
            const seams = yield* SeamHost.runSeamPipeline(stream)
            seamActions.push(seams.action)
            for (const builder of builders) {
              const built = builder.build(seams.window)
              if (Either.isLeft(built)) {
                invalid.push(`${builder.name}: ${built.left.message}`)
                continue
              }
              rendered.push(built.right.request)
              yield* RenderRecord.recordRender(stream, built.right, { provider: builder.name, model: builder.model })
            }
            window = (yield* ctx.completeTurn(stream)).window
          }
          return { window, compactions, seamActions, invalid, rendered }
        }).pipe(Effect.provide(live(filename)))

        // The loop really exercised compaction and seams, and every render was accepted by its builder.
        assert.deepStrictEqual(run.invalid, [])
        assert.strictEqual(run.rendered.length, turns.length * builders.length)
        assert.strictEqual(run.compactions.filter((tag) => tag === "Compacted").length, 1)
        assert.include(run.compactions, "SoftCompacted")
        assert.include(run.seamActions, "produced")
        // Every rendered request passes the provider's rules again.
        for (const request of run.rendered) {
          const checked = validate(request)
          assert.isTrue(Either.isRight(checked), Either.isLeft(checked) ? checked.left.message : "")
        }

        // A fresh layer over the same file.
        const reopened = yield* Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const log = yield* EventLog.EventLog
          const window = yield* ctx.load(stream)
          const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
          return { window, envelopes }
        }).pipe(Effect.provide(core(filename)))

        assert.deepStrictEqual(yield* Window.encode(reopened.window), yield* Window.encode(run.window))
        assert.strictEqual(reopened.envelopes.length, run.window.version)
        assert.strictEqual(
          reopened.envelopes.filter((envelope) => envelope.type === "PromptRendered").length,
          run.rendered.length
        )
        assert.deepStrictEqual(EventHash.verify(reopened.envelopes).ok, true)
        assert.deepStrictEqual(ToolPairs.problems(reopened.window.history, reopened.window.completedToolIds), [])
        assert.deepStrictEqual(ToolPairs.pendingCalls(reopened.window.history), [])
      }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
    },
    120_000
  )
})
