// The command line as a newcomer meets it: a session resumed from another directory works in its own
// workspace (through the resume hint, run exactly as printed); the agent refuses the ctxlog repository
// as a workspace; mistakes (an unknown flag or subcommand, an unknown session, a missing key) are one
// sentence on stderr and a failing exit code, and write nothing; an interrupted demo prints its hint.
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Message } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  agentDir,
  linesOf,
  type Ran,
  readStream,
  runCli,
  sessionOf,
  spawnCli,
  verifyLog,
  waitFor
} from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-cli-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Run a printed shell command as a person pastes it, from `cwd`, with stdin. */
const shell = (command: string, cwd: string, input: string): Promise<Ran> =>
  new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
    for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"]) delete env[key]
    const child = execFile("sh", ["-c", command], { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
    child.stdin?.end(input)
  })

/** The one sentence a mistake prints: exactly one line on stderr, nothing on stdout, exit code 1. */
const oneSentence = (ran: Ran): string => {
  assert.strictEqual(ran.code, 1, `${ran.stdout}\n${ran.stderr}`)
  assert.strictEqual(ran.stdout, "")
  const lines = linesOf(ran.stderr)
  assert.strictEqual(lines.length, 1, ran.stderr)
  assert.match(lines[0] ?? "", /^ctxlog-agent: /)
  return lines[0] ?? ""
}

const project = join(dir, "project")
const elsewhere = join(dir, "elsewhere")
const db = join(dir, "sessions.db")
mkdirSync(project, { recursive: true })
mkdirSync(elsewhere, { recursive: true })
writeFileSync(join(project, "marker.txt"), "in the project\n")
writeFileSync(join(elsewhere, "stray.txt"), "not the project\n")

describe("the agent's command line", () => {
  it.live(
    "a session resumed from another directory, by its hint run as printed, works in its own workspace",
    () =>
      Effect.gen(function* () {
        // Started from the agent's package directory, as `pnpm --filter @ctxlog/agent start` does.
        const first = yield* Effect.promise(() =>
          runCli(["run", "--workspace", project, "--db", db, "--task", '/call list_dir {"path": "."}'], {
            cwd: agentDir
          })
        )
        assert.strictEqual(first.code, 0, first.stderr)
        const stream = sessionOf(first.stdout)
        const hint = /^resume with: (.+)$/m.exec(first.stdout)?.[1]
        assert.isDefined(hint, first.stdout)
        assert.include(hint ?? "", `run --session ${stream} --db ${db}`)
        assert.notMatch(hint ?? "", /^ctxlog-agent /, "the binary is not on the PATH in a clone")

        // The hint, pasted into a shell in another directory: it resumes in the session's workspace.
        const resumed = yield* Effect.promise(() => shell(hint ?? "", elsewhere, '/call list_dir {"path": "."}\n'))
        assert.strictEqual(resumed.code, 0, `${resumed.stdout}\n${resumed.stderr}`)
        assert.include(resumed.stdout, `resumed ${stream}`)
        assert.include(resumed.stdout, `workspace ${project}`)
        const { window } = yield* readStream(db, stream)
        const listings = window.history.flatMap((m) => Message.toolResultsOf(m)).map((r) => r.content)
        assert.strictEqual(listings.length, 2)
        for (const listing of listings) {
          assert.include(listing, "marker.txt")
          assert.notInclude(listing, "stray.txt")
        }

        // An explicit --workspace wins, and the agent says so.
        const moved = yield* Effect.promise(() =>
          runCli(["run", "--session", stream, "--db", db, "--workspace", elsewhere, "--task", "/call list_dir {}"], {
            cwd: elsewhere
          })
        )
        assert.strictEqual(moved.code, 0, moved.stderr)
        assert.include(moved.stdout, `working in ${elsewhere} (--workspace), not in the session's workspace ${project}`)
        const check = yield* Effect.promise(() => verifyLog(db))
        assert.strictEqual(check.code, 0, check.stderr)
      }),
    180_000
  )

  it.live("mistakes are one sentence on stderr, exit code 1, and write nothing", () =>
    Effect.gen(function* () {
      const fresh = join(dir, "never.db")
      const flag = oneSentence(
        yield* Effect.promise(() => runCli(["run", "--bogus", "--workspace", project, "--db", fresh]))
      )
      assert.include(flag, "--bogus")
      assert.include(flag, "run --help")
      const sub = oneSentence(yield* Effect.promise(() => runCli(["frobnicate", "--db", fresh])))
      assert.include(sub, "'run', 'demo', 'sessions'")

      const key = oneSentence(
        yield* Effect.promise(() =>
          runCli(["run", "--provider", "anthropic", "--workspace", project, "--db", fresh, "--task", "hi"])
        )
      )
      assert.include(key, "ANTHROPIC_API_KEY")

      // The ctxlog repository itself is no workspace, e.g. the default one under `pnpm --filter`.
      const inside = oneSentence(
        yield* Effect.promise(() => runCli(["run", "--db", fresh, "--task", "hi"], { cwd: agentDir }))
      )
      assert.include(inside, "is inside the ctxlog repository")
      assert.include(inside, "--workspace")

      // A session id that is not in the log: the nearest ones are named.
      const started = yield* Effect.promise(() =>
        runCli(["run", "--workspace", project, "--db", join(dir, "two.db"), "--task", "hello"])
      )
      assert.strictEqual(started.code, 0, started.stderr)
      const stream = sessionOf(started.stdout)
      const typo = `${stream.slice(0, -1)}${stream.endsWith("0") ? "1" : "0"}`
      const unknown = oneSentence(
        yield* Effect.promise(() => runCli(["run", "--session", typo, "--db", join(dir, "two.db"), "--task", "hi"]))
      )
      assert.include(unknown, `no session "${typo}"`)
      assert.include(unknown, `the nearest: ${stream}`)
      assert.include(unknown, "sessions --db")
      const noFile = oneSentence(
        yield* Effect.promise(() => runCli(["run", "--session", typo, "--db", fresh, "--task", "hi"]))
      )
      assert.include(noFile, "no such file")
      assert.isFalse(existsSync(fresh), "no database was created")
      const { envelopes } = yield* readStream(join(dir, "two.db"), typo)
      assert.strictEqual(envelopes.length, 0)
    })
  )

  it.live(
    "a demo on a log that holds other sessions says recall includes them; interrupted, it prints its hint",
    () =>
      Effect.gen(function* () {
        const shared = join(dir, "shared.db")
        const before = yield* Effect.promise(() =>
          runCli(["run", "--workspace", project, "--db", shared, "--task", "hello"])
        )
        assert.strictEqual(before.code, 0, before.stderr)
        const child = spawnCli(["demo", "--db", shared, "--run-dir", join(dir, "demo")])
        let stderr = ""
        child.stderr.on("data", (data: Buffer) => {
          stderr += data.toString()
        })
        const seen = yield* Effect.promise(() => waitFor(child, /\[3\/\d+\] you›/))
        assert.include(seen, "this log already holds 1 earlier session: cross-session recall brings them into this run")
        const stream = sessionOf(seen)
        const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
        child.kill("SIGINT")
        yield* Effect.promise(() => exited)
        assert.match(stderr, /interrupted: the log is consistent; resume with: .+/)
        assert.include(stderr, ` run --session ${stream} --db ${shared}`)
        const check = yield* Effect.promise(() => verifyLog(shared))
        assert.strictEqual(check.code, 0, check.stderr)
      }),
    180_000
  )
})
