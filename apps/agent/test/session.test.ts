// Sessions across processes: an interactive session typed on stdin and resumed with `run --session`;
// a demo killed with SIGKILL in the middle of a turn and finished with `run --session`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventHash, Message, ToolPairs, Window } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readStream, runCli, sessionOf, spawnCli, waitFor } from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-session-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Type a line into the child's stdin a character at a time, as a person does. */
const type = (child: ReturnType<typeof spawnCli>, line: string) =>
  Effect.promise(async () => {
    for (const char of `${line}\n`) {
      child.stdin.write(char)
      await new Promise((resolve) => setTimeout(resolve, 3))
    }
  })

/** What must hold for any log the agent leaves behind. */
const consistent = (db: string, stream: string) =>
  Effect.gen(function* () {
    const { envelopes, window } = yield* readStream(db, stream)
    assert.isTrue(EventHash.verify(envelopes).ok, "hash chain")
    assert.deepStrictEqual(
      yield* Window.encode(Window.replay(envelopes.map((e) => e.event))),
      yield* Window.encode(window)
    )
    assert.deepStrictEqual(ToolPairs.pendingCalls(window.history), [])
    assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [])
    return { envelopes, window }
  })

describe("sessions", () => {
  it.live(
    "an interactive session typed on stdin, then resumed with run --session",
    () =>
      Effect.gen(function* () {
        const ws = join(dir, "interactive")
        mkdirSync(ws, { recursive: true })
        writeFileSync(join(ws, "NOTES.md"), "# notes\nThe answer is 42.\n")
        const db = join(dir, "interactive.db")
        const child = spawnCli(["run", "--db", db, "--workspace", ws])
        const header = yield* Effect.promise(() => waitFor(child, /session \S+/))
        const stream = sessionOf(header)
        yield* type(child, "hello there")
        yield* Effect.promise(() => waitFor(child, /events │/))
        yield* type(child, "")
        yield* type(child, '/call list_dir {"path": "."}')
        yield* Effect.promise(() => waitFor(child, /events │/))
        yield* type(child, '/call read_file {"path": "../interactive.db"}')
        const third = yield* Effect.promise(() => waitFor(child, /events │/))
        assert.include(third, "error")
        const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
        child.stdin.end()
        assert.strictEqual(yield* Effect.promise(() => exited), 0)

        const resumed = yield* Effect.promise(() =>
          runCli(["run", "--session", stream, "--db", db, "--workspace", ws], {
            input: 'what did I say first?\n/call list_dir {"path": "."}\n'
          })
        )
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.include(resumed.stdout, `resumed ${stream}`)
        assert.include(resumed.stdout, "You said: what did I say first?")

        const { window, envelopes } = yield* consistent(db, stream)
        const users = window.history.filter((m) => m.role === "user" && m.kind === "chat").map(Message.textOf)
        assert.deepStrictEqual(users, [
          "hello there",
          '/call list_dir {"path": "."}',
          '/call read_file {"path": "../interactive.db"}',
          "what did I say first?",
          '/call list_dir {"path": "."}'
        ])
        assert.strictEqual(window.compaction.turn, 5)
        // Tool calls made in the second process did not reuse the first process's ids.
        const callIds = window.history.flatMap((m) => Message.toolCallsOf(m).map((call) => call.id))
        assert.strictEqual(callIds.length, 3)
        assert.strictEqual(new Set(callIds).size, 3)
        // One system prompt and one knowledge set: resuming did not set them again.
        assert.strictEqual(envelopes.filter((e) => e.type === "SystemPromptSet").length, 1)
        // The workspace is recorded first (a resume finds it there), then the workspace notes.
        assert.isTrue(Message.textOf(window.knowledge[0] ?? { parts: [] }).startsWith(`Workspace directory: ${ws}\n`))
        assert.include(Message.textOf(window.knowledge[1] ?? { parts: [] }), "The answer is 42.")
        const results = window.history.flatMap((m) => Message.toolResultsOf(m))
        assert.include(results[0]?.content ?? "", "NOTES.md")
        assert.isTrue(results[1]?.isError)
        assert.include(results[1]?.content ?? "", "outside the workspace")

        const listed = yield* Effect.promise(() => runCli(["sessions", "--db", db]))
        assert.strictEqual(listed.code, 0, listed.stderr)
        // Piped (80 columns) the listing is stacked: the id whole on its line, its numbers on the next.
        const lines = listed.stdout.split("\n")
        const at = lines.indexOf(stream)
        assert.isAbove(at, -1, listed.stdout)
        const row = `${stream} ${lines[at + 1] ?? ""}`
        assert.match(row ?? "", new RegExp(`^${stream}\\s+\\S+\\s+5\\s+0\\s+0\\s+${envelopes.length}\\s`))
      }),
    180_000
  )

  it.live(
    "a demo killed with SIGKILL mid-turn is finished with run --session, leaving a consistent log",
    () =>
      Effect.gen(function* () {
        const db = join(dir, "killed.db")
        const runDir = join(dir, "killed")
        const child = spawnCli(["demo", "--db", db, "--run-dir", runDir])
        const header = yield* Effect.promise(() => waitFor(child, /session \S+/))
        const stream = sessionOf(header)
        // Into the fifth turn, right after a tool call was announced: the kill lands mid-turn.
        yield* Effect.promise(() => waitFor(child, /\[5\/\d+\] you›[\s\S]*→/))
        const exited = new Promise<NodeJS.Signals | null>((resolve) =>
          child.on("exit", (_code, signal) => resolve(signal))
        )
        child.kill("SIGKILL")
        assert.strictEqual(yield* Effect.promise(() => exited), "SIGKILL")
        const before = yield* readStream(db, stream)
        assert.notStrictEqual(before.envelopes.at(-1)?.type, "TurnCompleted")

        const resumed = yield* Effect.promise(() =>
          runCli([
            "run",
            "--session",
            stream,
            "--db",
            db,
            "--workspace",
            join(runDir, "tiny-shop"),
            "--task",
            "carry on"
          ])
        )
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.include(resumed.stdout, `resumed ${stream}`)
        const { envelopes, window } = yield* consistent(db, stream)
        assert.isAbove(envelopes.length, before.envelopes.length)
        assert.strictEqual(envelopes.at(-1)?.type, "TurnCompleted")
        // The events written before the kill are untouched.
        assert.deepStrictEqual(
          envelopes.slice(0, before.envelopes.length).map((e) => e.hash),
          before.envelopes.map((e) => e.hash)
        )
        assert.strictEqual(Message.textOf(window.history.at(-1) ?? { parts: [] }), "You said: carry on")
        // A call the kill left open was answered with an error result when the session was picked up.
        for (const open of ToolPairs.pendingCalls(before.window.history)) {
          const result = window.history.flatMap((m) => Message.toolResultsOf(m)).find((r) => r.toolCallId === open)
          assert.isTrue(result?.isError)
          assert.include(result?.content ?? "", "the session stopped before this tool ran")
        }
      }),
    180_000
  )
})
