// The interactive agent in a real terminal (tmux), at 80 and 160 columns, used as a person uses it:
// typed text shows before Enter and stays on screen after it; a bracketed paste of 50 lines is one turn
// (one user message, one model call); `/help` is answered here and never reaches the model or the log;
// Ctrl-C in the middle of an answer from a real provider (a local OpenAI-compatible server on
// 127.0.0.1) keeps the partial answer in the log, exits 130 and prints a resume command that, run as
// printed, continues with the same provider, model and window.
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventHash, Message } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { agentDir, argv, readStream, type Ran } from "./support/cli.js"
import { keys, openai, serveApi, writeSse } from "./support/server.js"
import * as Tmux from "./support/tmux.js"

const missing = Tmux.tmuxMissing()
if (missing !== undefined) throw new Error(missing)

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-tmux-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const secrets = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST", "NO_COLOR"]

/** The agent in a pane (colours on, as in a person's terminal). */
const agentIn = (width: number, args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) =>
  Tmux.open({
    command: [process.execPath, ...argv(args)],
    width,
    height: 40,
    cwd: agentDir,
    env,
    unset: secrets
  })

/** Run a printed shell command as a person pastes it, with stdin. */
const shell = (command: string, input: string, env: NodeJS.ProcessEnv): Promise<Ran> =>
  new Promise((resolve) => {
    const base: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
    for (const key of secrets) delete base[key]
    const child = execFile(
      "sh",
      ["-c", command],
      { cwd: dir, env: { ...base, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
    child.stdin?.end(input)
  })

/** Rows the terminal wrapped inside a word: a full row ending in a letter or digit, the next starting with one. */
const midWordWraps = (rows: ReadonlyArray<string>, width: number): ReadonlyArray<string> => {
  const found: Array<string> = []
  let command = false
  for (const [index, row] of rows.entries()) {
    if (/^(resume with:|interrupted:)/.test(row)) command = true
    else if ([...row].length < width) command = false
    const next = rows[index + 1] ?? ""
    if (!command && [...row].length === width && /[\p{L}\p{N}]$/u.test(row) && /^[\p{L}\p{N}]/u.test(next)) {
      found.push(`${row}⏎${next}`)
    }
  }
  return found
}

const pasted = Array.from(
  { length: 50 },
  (_, index) => `2026-03-01T10:00:${String(index).padStart(2, "0")} ERROR order ${1000 + index} failed`
).join("\n")

describe.each([80, 160])("ctxlog-agent run in a %i-column terminal", (width) => {
  it.scopedLive(
    "typed text shows before Enter and stays; a 50-line paste is one turn; /help stays here",
    () =>
      Effect.gen(function* () {
        const workspace = join(dir, `typed-${width}`)
        mkdirSync(workspace, { recursive: true })
        const db = join(dir, `typed-${width}.db`)
        const term = agentIn(width, ["run", "--workspace", workspace, "--db", db])
        yield* Effect.addFinalizer(() => Effect.sync(() => term.close()))
        const header = yield* Effect.promise(() => term.waitFor(/you› $/m))
        const stream = /session (agent-[0-9-]+-[0-9a-f]+)/.exec(header)?.[1] ?? ""
        assert.notStrictEqual(stream, "", header)

        // Typed, not yet sent: on the screen as typed.
        term.type("where are the failing orders?")
        yield* Effect.promise(() => term.waitFor(/^you› where are the failing orders\?$/m))
        term.press("Enter")
        yield* Effect.promise(() => term.waitFor(/You said: where are the failing orders\?/))

        // A bracketed paste of 50 lines, then Enter: one message.
        term.type("these failed: ")
        term.paste(`${pasted}\n`)
        term.press("Enter")
        yield* Effect.promise(() => term.waitFor(/\+\d+ events/, 2))

        term.type("/help")
        term.press("Enter")
        yield* Effect.promise(() => term.waitFor(/Commands at the prompt/))
        term.type("/exit")
        term.press("Enter")
        const screen = yield* Effect.promise(() => term.waitFor(/\[exit \d+\]/))

        // What was typed is still on screen, after the answers.
        assert.match(screen, /^you› where are the failing orders\?$/m)
        assert.match(screen, /^you› these failed: 2026-03-01T10:00:00 ERROR order 1000 failed$/m)
        assert.include(screen, "[exit 0]")
        // The agent's own lines (header, status lines, help) break between words, never inside one; a
        // command to copy (the resume hint) is printed whole.
        assert.deepStrictEqual(midWordWraps(term.rows(), width), [])

        const { envelopes, window } = yield* readStream(db, stream)
        const users = window.history.filter((message) => message.role === "user").map((m) => Message.textOf(m))
        assert.strictEqual(users.length, 2, users.join("\n---\n"))
        assert.strictEqual(users[0], "where are the failing orders?")
        assert.strictEqual(users[1], `these failed: ${pasted}`)
        assert.strictEqual(envelopes.filter((e) => e.type === "PromptRendered").length, 2)
        assert.notInclude(JSON.stringify(envelopes.map((e) => e.event)), "/help")
        assert.isTrue(EventHash.verify(envelopes).ok)
      }),
    180_000
  )

  it.scopedLive(
    "Ctrl-C mid-answer keeps the partial answer, exits 130, and the printed command resumes on the same model",
    () =>
      Effect.gen(function* () {
        // The first answer starts and never ends; the next one is whole.
        const server = yield* serveApi("openai", (response, n) => {
          if (n === 1) writeSse(response, [openai.role, openai.text("The failing orders all come from ")], false)
          else
            writeSse(response, [
              openai.role,
              openai.text("Resumed here."),
              openai.finish("stop"),
              openai.usage,
              openai.done
            ])
        })
        const workspace = join(dir, `interrupt-${width}`)
        mkdirSync(workspace, { recursive: true })
        const db = join(dir, `interrupt-${width}.db`)
        const flags = [
          "--provider",
          "openai",
          "--model",
          "gpt-test",
          "--base-url",
          `${server.url}/v1`,
          "--context-window",
          "128000"
        ]
        const term = agentIn(width, ["run", ...flags, "--workspace", workspace, "--db", db], {
          OPENAI_API_KEY: keys.openai
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => term.close()))
        const header = yield* Effect.promise(() => term.waitFor(/you› $/m))
        const stream = /session (agent-[0-9-]+-[0-9a-f]+)/.exec(header)?.[1] ?? ""
        // At 80 columns the header breaks at its separators: read it with the breaks as spaces.
        assert.include(header.replace(/\s+/g, " "), "openai/gpt-test · window 128000")
        term.type("why do orders fail?")
        term.press("Enter")
        yield* Effect.promise(() => term.waitFor(/The failing orders all come from/))
        term.press("C-c")
        const screen = yield* Effect.promise(() => term.waitFor(/\[exit \d+\]/))
        assert.include(screen, "[exit 130]")
        const hint = /resume with: (.+)$/m.exec(screen)?.[1]
        assert.isDefined(hint, screen)
        assert.include(hint ?? "", `run --session ${stream} --db ${db}`)
        assert.include(
          hint ?? "",
          `--provider openai --model gpt-test --base-url ${server.url}/v1 --context-window 128000`
        )

        // The partial answer is in the log, marked, and the turn is closed.
        const before = yield* readStream(db, stream)
        const last = before.window.history.at(-1)
        assert.strictEqual(last?.role, "assistant")
        assert.strictEqual(
          Message.textOf(last ?? { parts: [] }),
          "The failing orders all come from\n\n[interrupted by the user]"
        )
        assert.strictEqual(before.envelopes.at(-1)?.type, "TurnCompleted")

        // The hint, run as printed: the same provider, model and window, and the model sees the partial answer.
        const resumed = yield* Effect.promise(() => shell(hint ?? "", "and then?\n", { OPENAI_API_KEY: keys.openai }))
        assert.strictEqual(resumed.code, 0, `${resumed.stdout}\n${resumed.stderr}`)
        assert.include(resumed.stdout, `resumed ${stream} · openai/gpt-test · window 128000`)
        assert.include(resumed.stdout, "Resumed here.")
        assert.strictEqual(server.received.length, 2)
        const second = server.received[1]?.body ?? ""
        assert.include(second, '"model":"gpt-test"')
        assert.include(second, "The failing orders all come from")
        const after = yield* readStream(db, stream)
        assert.isTrue(EventHash.verify(after.envelopes).ok)
      }),
    180_000
  )
})
