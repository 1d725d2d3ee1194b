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
import { transcriptsDir } from "@ctxlog/testing"
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
import { yieldToEventLoop } from "../../vitest.property.js"

const budget = 16_000
const stream = "fullstack"

const core = (filename: string) =>
  ContextService.layer().pipe(
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

/** Import a transcript turn by turn into a window on a new SQLite file; reopen the file at the end. */
const turnLoop = (transcript: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "ctxlog-fullstack-"))),
    (dir) =>
      Effect.gen(function* () {
        const filename = join(dir, "events.db")
        const json: unknown = JSON.parse(readFileSync(join(transcriptsDir(), transcript), "utf8"))
        const { system, turns } = turnsOf(yield* Transcript.fromTranscriptJson(json))

        const run = yield* Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const prompt = system.map((message) => Message.textOf(message)).join("\n")
          let window = (yield* ctx.setSystemPrompt(stream, prompt)).window
          const compactions: Array<string> = []
          const seamActions: Array<string> = []
          const invalid: Array<string> = []
          const rendered: Array<CtxBuilder.RenderedRequest> = []
          const manualAt = Math.floor(turns.length / 2)
          for (const [index, turn] of turns.entries()) {
            // One turn of the event loop per agent turn: a long run must not hold the worker (vitest RPC timeouts).
            yield* Effect.promise(yieldToEventLoop)
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
                invalid.push(`turn ${index}, ${builder.name}: ${built.left.message}`)
                continue
              }
              rendered.push(built.right.request)
              yield* RenderRecord.recordRender(stream, built.right, { provider: builder.name, model: builder.model })
            }
            window = (yield* ctx.completeTurn(stream)).window
          }
          return { window, compactions, seamActions, invalid, rendered }
        }).pipe(Effect.provide(live(filename)))

        // A fresh layer over the same file.
        const reopened = yield* Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const log = yield* EventLog.EventLog
          const window = yield* ctx.load(stream)
          const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
          return { window, envelopes }
        }).pipe(Effect.provide(core(filename)))
        return { turns: turns.length, run, reopened }
      }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** What must hold after any turn loop. */
const checkLoop = ({ turns, run, reopened }: Effect.Effect.Success<ReturnType<typeof turnLoop>>) =>
  Effect.gen(function* () {
    // Every render was accepted by its builder, and passes the provider's rules again.
    assert.deepStrictEqual(run.invalid, [])
    assert.strictEqual(run.rendered.length, turns * builders.length)
    for (const request of run.rendered) {
      const checked = validate(request)
      assert.isTrue(Either.isRight(checked), Either.isLeft(checked) ? checked.left.message : "")
    }
    // The reopened window is the live one; the log holds every event, every render, an intact chain.
    assert.deepStrictEqual(yield* Window.encode(reopened.window), yield* Window.encode(run.window))
    assert.strictEqual(reopened.envelopes.length, run.window.version)
    assert.strictEqual(
      reopened.envelopes.filter((envelope) => envelope.type === "PromptRendered").length,
      run.rendered.length
    )
    assert.deepStrictEqual(EventHash.verify(reopened.envelopes).ok, true)
    // No tool call without its result or result without its call.
    assert.deepStrictEqual(ToolPairs.problems(reopened.window.history, reopened.window.completedToolIds), [])
    assert.deepStrictEqual(ToolPairs.pendingCalls(reopened.window.history), [])
  })

describe("full stack on SQLite", () => {
  it.live(
    "the django transcript turn by turn: compaction, seams, renders; the reopened log matches and verifies",
    () =>
      Effect.gen(function* () {
        const loop = yield* turnLoop("04-mini-swe-agent-django-11910.json")
        assert.isAbove(loop.turns, 100)
        // The loop really exercised the soft tier, a manual compaction and seams.
        assert.strictEqual(loop.run.compactions.filter((tag) => tag === "Compacted").length, 1)
        assert.include(loop.run.compactions, "SoftCompacted")
        assert.include(loop.run.seamActions, "produced")
        yield* checkLoop(loop)
      }),
    120_000
  )

  for (const transcript of [
    "01-sweagent-enigma-ctf-i-got-id.json",
    "06-openhands-codeact-ponyc-4588.json",
    "10-claude-code-agentcmd-navuser-initials.json"
  ]) {
    it.live(
      `${transcript} turn by turn: the reopened log matches the live window and verifies`,
      () =>
        Effect.gen(function* () {
          const loop = yield* turnLoop(transcript)
          assert.strictEqual(loop.run.compactions.filter((tag) => tag === "Compacted").length, 1)
          yield* checkLoop(loop)
        }),
      120_000
    )
  }
})
