// The command line as a newcomer reads it: every command's `--help`, piped, is plain text within 80
// columns that names the API-key variables and (for run) the prompt's slash commands; the help pages
// list exactly the flags the parser takes; a mistake names the flag and the value, with the nearest
// flag or the values it takes, and writes nothing — also through pnpm, with no pnpm lines around it;
// a provider whose server is not running fails at once, in one sentence, and leaves no session.
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { stripVTControlCharacters } from "node:util"
import { CliConfig, Command, HelpDoc } from "@effect/cli"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Cli from "../src/Cli.js"
import * as Help from "../src/Help.js"
import { agentDir, linesOf, type Ran, runCli } from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-help-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** One sentence on stderr, nothing on stdout, exit code 1. */
const oneSentence = (ran: Ran): string => {
  assert.strictEqual(ran.code, 1, `${ran.stdout}\n${ran.stderr}`)
  assert.strictEqual(ran.stdout, "")
  const lines = linesOf(ran.stderr)
  assert.strictEqual(lines.length, 1, ran.stderr)
  assert.match(lines[0] ?? "", /^ctxlog-agent: /)
  return lines[0] ?? ""
}

/** A port on 127.0.0.1 that nothing listens on (a server bound it, then closed). */
const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

describe("help and mistakes", () => {
  it.live("every command's --help, piped and with colours allowed, is plain text within 80 columns", () =>
    Effect.gen(function* () {
      for (const args of [["--help"], ["run", "--help"], ["demo", "--help"], ["sessions", "--help"], ["-h"]]) {
        // NO_COLOR unset: stdout is a pipe, and that alone must keep escape codes out.
        const ran = yield* Effect.promise(() => runCli(args, { env: { NO_COLOR: "" } }))
        assert.strictEqual(ran.code, 0, `${args.join(" ")}: ${ran.stderr}`)
        assert.strictEqual(ran.stderr, "")
        assert.notInclude(ran.stdout, "\u001b", args.join(" "))
        for (const line of ran.stdout.split("\n")) assert.isAtMost(line.length, 80, `${args.join(" ")}: ${line}`)
        assert.notInclude(ran.stdout, "A user-defined piece of text")
        if (args[0] === "run") {
          for (const word of [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "/call",
            "/reload",
            "/exit",
            "/help",
            "Examples:"
          ]) {
            assert.include(ran.stdout, word)
          }
          assert.isBelow(linesOf(ran.stdout).length, 70)
        }
      }
    })
  )

  it("the help pages list exactly the flags the parser takes", () => {
    const parsed = (command: Command.Command<string, never, unknown, unknown>) => {
      const text = stripVTControlCharacters(HelpDoc.toAnsiText(Command.getHelp(command, CliConfig.defaultConfig)))
      const builtIn = new Set(["--completions", "--log-level", "--help", "--wizard", "--version"])
      return [...new Set(text.match(/--[a-z][a-z-]*/g) ?? [])].filter((flag) => !builtIn.has(flag)).sort()
    }
    const commands = { run: Cli.run, demo: Cli.demo, sessions: Cli.sessions }
    for (const help of Help.commands) {
      const command = commands[help.name] as unknown as Command.Command<string, never, unknown, unknown>
      assert.deepStrictEqual(help.flags.map((flag) => `--${flag.name}`).sort(), parsed(command), help.name)
    }
  })

  it.live("a bad flag or value is one sentence naming it, with what it should be; nothing is written", () =>
    Effect.gen(function* () {
      const db = join(dir, "never.db")
      const gemini = oneSentence(yield* Effect.promise(() => runCli(["run", "--provider", "gemini", "--db", db])))
      assert.include(gemini, "--provider gemini: not a provider; it is one of offline, anthropic, openai")
      const modle = oneSentence(yield* Effect.promise(() => runCli(["run", "--modle", "gpt-5", "--db", db])))
      assert.include(modle, "--modle: not an option of run (did you mean --model?)")
      const windowSize = oneSentence(
        yield* Effect.promise(() => runCli(["run", "--context-window", "128k", "--db", db]))
      )
      assert.include(windowSize, "--context-window 128k: not a whole number")
      const command = oneSentence(yield* Effect.promise(() => runCli(["sesions", "--db", db])))
      assert.include(command, "sesions: not a command (did you mean sessions?)")
      assert.isFalse(existsSync(db))
    })
  )

  it.live("through pnpm, as the hints print it, a mistake is still one line", () =>
    Effect.gen(function* () {
      const ran = yield* Effect.promise(
        () =>
          new Promise<Ran>((resolve) => {
            const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
            execFile(
              "sh",
              ["-c", "pnpm --filter @ctxlog/agent --silent start run --modle x"],
              { cwd: join(agentDir, "..", ".."), env },
              (error, stdout, stderr) =>
                resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
            )
          })
      )
      assert.include(oneSentence(ran), "did you mean --model?")
    })
  )

  it.live("a provider whose server is not running fails at once, in one sentence, and leaves no session", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(closedPort)
      const workspace = join(dir, "ws")
      mkdirSync(workspace, { recursive: true })
      const db = join(dir, "refused.db")
      const ran = yield* Effect.promise(() =>
        runCli(
          [
            "run",
            "--provider",
            "openai",
            "--base-url",
            `http://127.0.0.1:${port}/v1`,
            "--workspace",
            workspace,
            "--db",
            db,
            "--task",
            "hi"
          ],
          { env: { OPENAI_API_KEY: "test-openai-key" } }
        )
      )
      const sentence = oneSentence(ran)
      assert.include(sentence, `cannot reach openai at http://127.0.0.1:${port}/v1 (connection refused)`)
      assert.include(sentence, "give the right --base-url")
      assert.notInclude(ran.stderr, "resume with")
      assert.isFalse(existsSync(db))
    })
  )
})
