// Issue 25 item 1: the environment snapshot as the turn reminder: rendered deterministically, capped in
// tokens, and every render that used it rebuilds byte for byte from the log alone.
import { ContextService, EventLog, Ids, Message, TokenCounter, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { CtxBuilder, EnvSnapshot, RenderRecord } from "../src/index.js"

const live = ContextService.layerMemory({ ids: Ids.layerSequential("t") })

const snapshot = (changed: number, status: number): EnvSnapshot.EnvSnapshot => ({
  workspace: "/work/repo",
  date: "2026-11-25",
  git: { branch: "main", status: Array.from({ length: status }, (_, i) => ` M src/module${i}.ts`) },
  changedFiles: Array.from({ length: changed }, (_, i) => `src/changed${i}.ts`),
  task: { goal: "fix the parser", todos: ["write the failing test", "fix it"] }
})

const right = <A, E>(either: Either.Either<A, E>): A =>
  Either.getOrThrowWith(either, (error) => new Error(`unexpected: ${String(error)}`))

describe("EnvSnapshot.reminder", () => {
  it.effect("renders every field, deterministically, under the preamble", () =>
    Effect.gen(function* () {
      const counter = yield* TokenCounter.TokenCounter
      const policy = { preamble: "Stay inside the workspace.", maxTokens: 400 }
      const text = right(EnvSnapshot.reminder(snapshot(2, 1), policy, counter.count))
      assert.strictEqual(
        text,
        [
          "Stay inside the workspace.",
          '<environment date="2026-11-25">',
          "Workspace: /work/repo",
          "Git branch: main",
          "Git status:",
          "   M src/module0.ts",
          "Task: fix the parser",
          "Todo:",
          "  write the failing test",
          "  fix it",
          "Files you changed recently:",
          "  src/changed0.ts",
          "  src/changed1.ts",
          "</environment>"
        ].join("\n")
      )
      assert.strictEqual(right(EnvSnapshot.reminder(snapshot(2, 1), policy, counter.count)), text)
      const bare = right(
        EnvSnapshot.reminder(
          { workspace: "/tmp/x", date: "2026-01-01", changedFiles: [] },
          { maxTokens: 50 },
          counter.count
        )
      )
      assert.strictEqual(
        bare,
        '<environment date="2026-01-01">\nWorkspace: /tmp/x\nGit: not a repository\n</environment>'
      )
    }).pipe(Effect.provide(live))
  )

  it.effect("is capped in tokens: status lines go first, then the oldest changed files; the core stays", () =>
    Effect.gen(function* () {
      const counter = yield* TokenCounter.TokenCounter
      const big = snapshot(15, 15)
      const full = right(EnvSnapshot.reminder(big, { maxTokens: 10_000 }, counter.count))
      const fullTokens = counter.count(full)
      for (const cap of [fullTokens - 1, 150, 90, 60]) {
        const text = right(EnvSnapshot.reminder(big, { maxTokens: cap }, counter.count))
        assert.isAtMost(counter.count(text), cap, `cap ${cap}`)
        for (const kept of ["Workspace: /work/repo", "Git branch: main", 'date="2026-11-25"'])
          assert.include(text, kept)
        assert.match(text, /environment lines left out to fit/)
      }
      const mid = right(EnvSnapshot.reminder(big, { maxTokens: 150 }, counter.count))
      // Status lines went before any changed file; the newest changed file stays longest.
      assert.notInclude(mid, "src/module14.ts")
      assert.include(mid, "src/changed14.ts")
      // maxListed bounds the lists before any token cap.
      const listed = right(EnvSnapshot.reminder(big, { maxTokens: 10_000, maxListed: 3 }, counter.count))
      assert.include(listed, "(12 earlier not shown)")
      assert.notInclude(listed, "src/changed11.ts")
      // A cap that cannot hold the core is a typed error, as is a non-positive cap.
      const tooSmall = EnvSnapshot.reminder(big, { maxTokens: 5, preamble: "p" }, counter.count)
      assert.isTrue(Either.isLeft(tooSmall))
      assert.isTrue(Either.isLeft(EnvSnapshot.reminder(big, { maxTokens: 0 }, counter.count)))
      assert.isTrue(Either.isLeft(EnvSnapshot.decode({ workspace: 1 })))
    }).pipe(Effect.provide(live))
  )

  it.effect("renders that used a snapshot reminder rebuild byte for byte from the log", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const log = yield* EventLog.EventLog
      const counter = yield* TokenCounter.TokenCounter
      const config: CtxBuilder.ProviderConfig = { provider: "anthropic", model: "claude-sonnet-4-5" }
      yield* ctx.setSystemPrompt("env", "You are a coding agent.")
      const reminders: Array<string> = []
      for (let turn = 0; turn < 3; turn++) {
        yield* ctx.appendMessages("env", [Message.user(`step ${turn}`)])
        const turnReminder = right(
          EnvSnapshot.reminder(
            snapshot(turn, turn),
            { preamble: "Stay inside the workspace.", maxTokens: 120 },
            counter.count
          )
        )
        reminders.push(turnReminder)
        const options = { turnReminder, maxOutputTokens: 256 }
        const built = CtxBuilder.forProvider(config).build(yield* ctx.load("env"), options)
        if (Either.isLeft(built)) return yield* Effect.die(built.left)
        assert.include(JSON.stringify(built.right.request), "Workspace: /work/repo")
        yield* RenderRecord.recordRender(
          "env",
          built.right,
          { provider: "anthropic", model: config.model },
          { config, options }
        )
      }
      // The reminder changes with the work.
      assert.strictEqual(new Set(reminders).size, 3)
      const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("env")))
      const blobs = RenderRecord.collectBlobs(envelopes.map((envelope) => envelope.event))
      let rebuilt = 0
      for (const render of envelopes) {
        if (render.event._tag !== "PromptRendered") continue
        const before = Window.replay(envelopes.filter((e) => e.version < render.version).map((e) => e.event))
        const result = RenderRecord.rebuild(before, render.event, render.version, blobs)
        assert.isTrue(Either.isRight(result), Either.isLeft(result) ? result.left.message : "")
        assert.strictEqual(render.event.render?.turnReminder, reminders[rebuilt])
        rebuilt += 1
      }
      assert.strictEqual(rebuilt, 3)
    }).pipe(Effect.provide(live))
  )
})
