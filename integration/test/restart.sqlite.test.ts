// Issue 4's restart test on a real SQLite file and a real process exit: a child node process compacts
// and exits; this process reopens the same file and loads. Nothing already compacted is compacted again.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { ContextService, ConversationMemory, EventLog, Window } from "@ctxlog/core"
import { TieredCompaction } from "@ctxlog/compaction"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { CompactorCalls, sessionLayer, tiered } from "./support/session.js"
import { bundledEntrySync } from "../../scripts/ts-bundle.mjs"

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const run = promisify(execFile)

/** What the child printed: its loaded conversation, compactor calls, and the two compacted windows (encoded). */
interface FirstSession {
  readonly loaded: ReadonlyArray<{ readonly id: string; readonly kind: string }>
  readonly memoryCalls: number
  readonly calls: number
  readonly maybe: { readonly tag: string; readonly window: typeof Window.Window.Encoded }
  readonly manual: { readonly tag: string; readonly window: typeof Window.Window.Encoded }
}

const firstSession = (args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    run(process.execPath, [bundledEntrySync(join(packageDir, "test", "child", "firstSession.ts")), ...args], {
      cwd: packageDir,
      maxBuffer: 64 * 1024 * 1024
    })
  ).pipe(Effect.map(({ stdout }): FirstSession => JSON.parse(stdout.trim().split("\n").pop() ?? "null")))

/** A value as it looks after a trip through JSON (what the child printed). */
const viaJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const compactedEvents = (stream: string) =>
  Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read(stream))).pipe(
    Effect.map((envelopes) => Chunk.toReadonlyArray(envelopes).filter((envelope) => envelope.type === "Compacted"))
  )

describe("restart on SQLite", () => {
  it.live(
    "compact in a child process, exit, reopen the file, load: no second compaction of the same prefix",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "ctxlog-integration-"))
      const filename = join(dir, "events.db")
      return Effect.gen(function* () {
        const child = yield* firstSession([filename, "conv", "window-maybe", "window-manual"])
        // The child really compacted: once by the memory, once by maybeCompact, once by compactContext.
        assert.strictEqual(child.memoryCalls, 1)
        assert.strictEqual(child.calls, 3)
        assert.strictEqual(child.loaded[0]?.kind, "summary")
        assert.strictEqual(child.maybe.tag, "Compacted")
        assert.strictEqual(child.manual.tag, "Compacted")

        const parent = yield* Effect.gen(function* () {
          const memory = yield* ConversationMemory.ConversationMemory
          const ctx = yield* ContextService.ContextService
          const calls = yield* CompactorCalls
          const loaded = yield* memory.load("conv")
          const windows = []
          for (const stream of ["window-maybe", "window-manual"]) {
            const before = yield* ctx.load(stream)
            const compactedBefore = yield* compactedEvents(stream)
            const result = yield* TieredCompaction.maybeCompact(stream, tiered)
            const after = yield* ctx.load(stream)
            const compactedAfter = yield* compactedEvents(stream)
            windows.push({
              stream,
              before: yield* Window.encode(before),
              result: result._tag,
              after,
              compactedBefore: compactedBefore.length,
              compactedAfter: compactedAfter.length
            })
          }
          return { loaded, windows, calls: yield* Ref.get(calls) }
        }).pipe(Effect.provide(sessionLayer(filename)))

        // Loaded from the file: the same [summary, ...kept] the child printed, and no compactor call.
        assert.deepStrictEqual(viaJson(parent.loaded), child.loaded)
        assert.strictEqual(parent.calls, 0)
        for (const [window, printed] of [
          [parent.windows[0], child.maybe.window],
          [parent.windows[1], child.manual.window]
        ] as const) {
          assert.isDefined(window)
          if (window === undefined) continue
          // The reopened window is the child's compacted window, byte for byte after JSON.
          assert.deepStrictEqual(viaJson(window.before), viaJson(printed), window.stream)
          assert.strictEqual(window.compactedBefore, 1, window.stream)
          // maybeCompact at the same size: no second compaction, the watermark stays.
          assert.notStrictEqual(window.result, "Compacted", window.stream)
          assert.strictEqual(window.compactedAfter, 1, window.stream)
          assert.strictEqual(window.after.watermark, printed.watermark, window.stream)
          assert.isAbove(window.after.watermark ?? 0, 0, window.stream)
        }
      }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
    },
    120_000
  )
})
