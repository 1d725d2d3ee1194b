// `ctxlog-agent demo` end to end, as a user runs it: a real process, a real SQLite file, the sample
// project copied and fixed. Then the log is checked on its own terms.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService, EventHash, EventLog, Message, ToolPairs, Window } from "@ctxlog/core"
import { FileStore } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { RenderRecord } from "@ctxlog/providers"
import * as Restore from "../../inspector/src/Restore.js"
import * as SweepPool from "../../inspector/src/SweepPool.js"
import * as Demo from "../src/Demo.js"
import { readStream, runCli, sessionOf } from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-demo-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("ctxlog-agent demo", () => {
  it.live(
    "drives the window through every tier, fixes the bug, and leaves a log that replays and verifies",
    () =>
      Effect.gen(function* () {
        const db = join(dir, "demo.db")
        const runDir = join(dir, "run")
        const ran = yield* Effect.promise(() => runCli(["demo", "--db", db, "--run-dir", runDir]))
        assert.strictEqual(ran.code, 0, ran.stderr)
        const stream = sessionOf(ran.stdout)
        // The inspector commands name this stream and this file.
        assert.include(ran.stdout, `ctxlog window ${stream} --db ${db}`)
        assert.include(ran.stdout, `ctxlog serve --db ${db}`)
        // Readable: pasted logs are folded, and each turn still ends in its status line.
        const lines = ran.stdout.split("\n")
        assert.isBelow(lines.length, 400, "the demo's output in lines")
        assert.strictEqual(
          lines.filter((line) => / events │ compaction /.test(line)).length,
          Demo.planFor(Demo.sampleDir).length,
          "one status line per turn"
        )
        assert.include(ran.stdout, "more lines (")

        const { envelopes, window } = yield* readStream(db, stream)
        const counts = Demo.summarize(envelopes)
        // Each kind of compaction happened, and the rest of the machinery with it.
        assert.isAbove(counts.softMidIteration, 0, "soft compaction mid-iteration")
        assert.isAbove(counts.softAtTurnStart, 0, "soft compaction at a turn start")
        assert.isAbove(counts.hard, 0, "hard compaction")
        assert.isAbove(counts.proactive, 0, "proactive compaction")
        assert.isAbove(counts.trimmed, 0, "trimming")
        assert.isAbove(counts.pruned, 0, "pruning")
        assert.isAbove(counts.seams, 0, "seams")
        assert.isAbove(counts.applied, 0, "deferred summaries applied")
        assert.isAbove(counts.recalled, 0, "recall injected")
        // The agent offers skills (ADR 0126): the turns that ask for tests get the run-tests skill placed
        // in knowledge as the `skill` kind, and a render sends it.
        assert.isAbove(counts.skills, 0, "skills placed")
        const placed = envelopes.flatMap((envelope) =>
          envelope.event._tag === "MessagesInjected" && envelope.event.kind === "skill"
            ? envelope.event.messages.map((message) => Message.textOf(message))
            : []
        )
        assert.isTrue(
          placed.some((text) => text.includes("run-tests")),
          placed.join("\n")
        )
        assert.isAtLeast(counts.renders, Demo.planFor(Demo.sampleDir).length)

        // Every render rebuilds from the log to the bytes it recorded (the check `ctxlog render` makes),
        // and no render plus its output reserve, tool schemas and reminder exceeded the model's window.
        const renders = RenderRecord.verifyAll(envelopes)
        assert.isAtLeast(renders.renders, Demo.planFor(Demo.sampleDir).length)
        assert.deepStrictEqual(
          renders.failures.map((failure) => failure.message),
          []
        )
        assert.strictEqual(renders.verified, renders.renders)
        assert.deepStrictEqual(renders.overWindow, [])

        // Each turn's reminder is the environment snapshot at its start (issue 25 item 1): recorded with
        // every render, it changes with the work. Renders before the fix is written do not name
        // src/cart.js among the changed files; renders of the turns after it do.
        const reminders = envelopes.flatMap((envelope) =>
          envelope.event._tag === "PromptRendered" ? [envelope.event.render?.turnReminder ?? ""] : []
        )
        assert.strictEqual(reminders.length, renders.renders)
        for (const text of reminders) {
          assert.match(text, /^Stay inside the workspace\./)
          assert.include(text, "<environment date=")
          assert.include(text, `Workspace: ${join(runDir, "tiny-shop")}`)
        }
        const names = (text: string) => /Files you changed recently:\n(?: {2}.*\n)*? {2}src\/cart\.js/.test(text)
        const firstNaming = reminders.findIndex(names)
        assert.isAbove(firstNaming, 0, "a render after the fix names src/cart.js among the changed files")
        assert.isFalse(reminders.slice(0, firstNaming).some(names))
        assert.isTrue(reminders.slice(firstNaming).every(names), "every later render keeps naming it")
        assert.isAbove(new Set(reminders).size, 1, "the reminders change with the work")

        // The large outputs (the whole catalog, the order log, broad searches) are in the file store:
        // their events hold a preview with the handle (issue 25 item 2).
        const handles = envelopes.flatMap((envelope) =>
          envelope.event._tag === "MessageAppended"
            ? Message.toolResultsOf(envelope.event.message).flatMap((part) => {
                const handle = FileStore.handleOf(part)
                return handle === undefined ? [] : [handle]
              })
            : []
        )
        assert.isAtLeast(handles.length, 3, "stored outputs")
        assert.isTrue(handles.every((handle) => handle.bytes > 16_384))

        // Replaying the stored events gives the window the log loads; the hash chain is intact.
        const replayed = Window.replay(envelopes.map((envelope) => envelope.event))
        assert.deepStrictEqual(yield* Window.encode(replayed), yield* Window.encode(window))
        assert.strictEqual(window.version, envelopes.length)
        assert.isTrue(EventHash.verify(envelopes).ok)
        assert.deepStrictEqual(ToolPairs.pendingCalls(window.history), [])
        assert.strictEqual(envelopes.at(-1)?.type, "TurnCompleted")

        // Issue 39: the scripted model reads the archive back once (recall_archived), answered from the
        // log; restoring a compaction right after it gives
        // back the window it replaced (the demo's last hard compaction, on a copy of the log up to it).
        const calls = envelopes.flatMap((envelope) =>
          envelope.event._tag === "MessageAppended"
            ? Message.toolCallsOf(envelope.event.message).filter((call) => call.name === "recall_archived")
            : []
        )
        assert.isAtLeast(calls.length, 1, "a recall_archived call")
        const answers = envelopes.flatMap((envelope) =>
          envelope.event._tag === "MessageAppended"
            ? Message.toolResultsOf(envelope.event.message).filter((r) => calls.some((c) => c.id === r.toolCallId))
            : []
        )
        assert.isTrue(
          answers.some((answer) => !answer.isError && answer.content.includes("replaced:")),
          JSON.stringify(answers)
        )
        // Every render holds the turn's user message (the newest ask appended before it): whole, or cut
        // by the fit to its head and tail (ADR 0124). No seam folds it any more (it missed 5 renders).
        let ask: Message.Message | undefined
        let replaying = Window.empty
        for (const { event } of envelopes) {
          if (event._tag === "MessageAppended" && Message.isUserAsk(event.message)) ask = event.message
          if (event._tag === "PromptRendered" && ask !== undefined) {
            const held = Window.findMessage(replaying, ask.id)
            assert.isDefined(
              held,
              `render at event ${event.id}: the turn's user message ${ask.id} is not in the window`
            )
            const text = held === undefined ? "" : Message.textOf(held)
            if (text !== Message.textOf(ask)) {
              assert.isTrue(text.startsWith(Message.textOf(ask).slice(0, 100)), `render at event ${event.id}`)
              assert.isTrue(text.endsWith(Message.textOf(ask).slice(-50)), `render at event ${event.id}`)
            }
          }
          replaying = Window.evolve(replaying, event)
        }
        const at = envelopes.findLastIndex((e) => e.event._tag === "Compacted" && e.event.summary !== null)
        assert.isAbove(at, 0)
        const compacted = envelopes[at]
        if (compacted !== undefined) {
          const before = Window.replay(envelopes.slice(0, at).map((envelope) => envelope.event))
          const restored = yield* Effect.gen(function* () {
            const log = yield* EventLog.EventLog
            yield* log.append(
              stream,
              envelopes.slice(0, at + 1).map((envelope) => envelope.event),
              "no_stream"
            )
            yield* Restore.restore(stream, compacted.eventId)
            return yield* (yield* ContextService.ContextService).load(stream)
          }).pipe(Effect.provide(ContextService.layerMemory()))
          assert.deepStrictEqual(
            restored.history.map((message) => message.id),
            before.history.map((message) => message.id)
          )
          assert.deepStrictEqual(restored.tokens, before.tokens)
        }

        // The sample project's tests pass in the copy the demo worked on (and failed before).
        const output = execFileSync(process.execPath, ["--test"], {
          cwd: join(runDir, "tiny-shop"),
          env: { ...process.env, NO_COLOR: "1" }
        }).toString()
        assert.match(output, /# fail 0/)
        assert.throws(() => execFileSync(process.execPath, ["--test"], { cwd: Demo.sampleDir, stdio: "pipe" }))
        assert.match(ran.stdout, /tests\s+pass/)

        // Issue 38: the recorded policy replayed as a sweep candidate loses nothing, overflows no render
        // and costs within 1% of the recorded run (the cache model's price of both).
        const swept = yield* SweepPool.runJob({ _tag: "sqlite", file: db, stream, read: { integrity: "verified" } }, [
          { name: "recorded", settings: {} }
        ])
        assert.isTrue(swept.ok, swept.ok ? "" : swept.error)
        if (swept.ok) {
          const [result] = swept.results
          const [replayed] = result?.candidates ?? []
          assert.isNull(replayed?.error ?? null)
          assert.strictEqual(replayed?.totals.calls, renders.renders)
          assert.deepStrictEqual(replayed?.lost, [])
          assert.strictEqual(replayed?.totals.overflows, 0)
          const recorded = result?.recorded.totals.dollars ?? 0
          assert.isAbove(recorded, 0)
          assert.isAtMost(Math.abs((replayed?.totals.dollars ?? 0) - recorded), recorded * 0.01)
        }
      }),
    480_000
  )
})
