// Where the logs are: one default log for the agent and the inspector (`.ctxlog/ctxlog.db` in the
// directory the person typed the command in, also through pnpm); a listing of a log that is not there
// is an error and creates nothing; the agent on a damaged log says so as the inspector does, with the
// inspector's exit code (3), and writes nothing.
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Invocation from "../src/Invocation.js"
import { agentDir, linesOf, type Ran, runCli, sessionOf, verifyLog } from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-paths-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const repository = join(agentDir, "..", "..")

/** Run a shell command from `cwd` as a person does, without the test run's own pnpm variables. */
const shell = (command: string, cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Ran> =>
  new Promise((resolve) => {
    const base: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" }
    for (const key of Object.keys(base)) if (key.startsWith("npm_") || key === "INIT_CWD") delete base[key]
    for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"]) delete base[key]
    execFile(
      "sh",
      ["-c", command],
      { cwd, env: { ...base, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

describe("where the logs are", () => {
  it("pnpm's invocation directory is used only when pnpm started the agent's own start or demo script", () => {
    const env = { npm_package_name: "@ctxlog/agent", npm_lifecycle_event: "start", INIT_CWD: "/home/me/proj" }
    assert.strictEqual(Invocation.invocationDirectory(env), "/home/me/proj")
    assert.strictEqual(Invocation.invocationDirectory({ ...env, npm_lifecycle_event: "demo" }), "/home/me/proj")
    assert.isUndefined(Invocation.invocationDirectory({ ...env, npm_lifecycle_event: "test" }))
    assert.isUndefined(Invocation.invocationDirectory({ ...env, npm_package_name: "ctxlog" }))
    assert.isUndefined(Invocation.invocationDirectory({}))
  })

  it.live("the agent through pnpm and `pnpm ctxlog` share one default log: where the command was typed", () =>
    Effect.gen(function* () {
      const here = join(dir, "here")
      mkdirSync(here, { recursive: true })
      const ran = yield* Effect.promise(() =>
        shell(`pnpm -C ${repository} --filter @ctxlog/agent --silent start run --task "hello"`, here)
      )
      assert.strictEqual(ran.code, 0, `${ran.stdout}\n${ran.stderr}`)
      const stream = sessionOf(ran.stdout)
      assert.isTrue(existsSync(join(here, ".ctxlog", "ctxlog.db")), ran.stdout)
      assert.include(ran.stdout, `--db ${join(here, ".ctxlog", "ctxlog.db")}`)
      const listed = yield* Effect.promise(() => shell(`pnpm -C ${repository} --silent ctxlog streams`, here))
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.include(listed.stdout, stream)
    })
  )

  it.live("sessions on a log that is not there: one sentence, exit 1, and no file or folder created", () =>
    Effect.gen(function* () {
      const missing = join(dir, "typo", "nope.db")
      const ran = yield* Effect.promise(() => runCli(["sessions", "--db", missing]))
      assert.strictEqual(ran.code, 1, ran.stdout)
      assert.strictEqual(ran.stdout, "")
      const lines = linesOf(ran.stderr)
      assert.strictEqual(lines.length, 1, ran.stderr)
      assert.include(lines[0] ?? "", `no log at ${missing} (no such file; nothing was created)`)
      assert.isFalse(existsSync(join(dir, "typo")))
    })
  )

  it.live("on a damaged log the agent says so as the inspector does, exit code 3, and writes nothing", () =>
    Effect.gen(function* () {
      const workspace = join(dir, "ws")
      mkdirSync(workspace, { recursive: true })
      const db = join(dir, "damaged.db")
      const first = yield* Effect.promise(() =>
        runCli(["run", "--workspace", workspace, "--db", db, "--task", "hello"])
      )
      assert.strictEqual(first.code, 0, first.stderr)
      const stream = sessionOf(first.stdout)
      // An edit behind the log's back: the append-only triggers dropped, one event's text changed.
      const sql = (script: string) =>
        Effect.promise(
          () =>
            new Promise<string>((resolve, reject) =>
              execFile(
                process.execPath,
                ["-e", `const db = new (require("better-sqlite3"))(process.argv[1]); ${script}`, db],
                { cwd: agentDir },
                (error, stdout) => (error === null ? resolve(stdout) : reject(error))
              )
            )
        )
      const count = () => sql(`console.log(db.prepare("select count(*) as n from events").get().n)`)
      const before = yield* count()
      yield* sql(`for (const { name } of db.prepare("select name from sqlite_master where type = 'trigger'").all()) db.exec('drop trigger "' + name + '"');
        db.prepare("update events set data = replace(data, 'hello', 'jello') where stream_id = ? and type = 'MessageAppended'").run("${stream}")`)

      const inspector = yield* Effect.promise(() => verifyLog(db))
      assert.strictEqual(inspector.code, 3, inspector.stderr)
      for (const args of [
        ["run", "--session", stream, "--db", db, "--task", "again"],
        ["sessions", "--db", db]
      ]) {
        const ran = yield* Effect.promise(() => runCli(args))
        assert.strictEqual(ran.code, 3, `${args[0]}: ${ran.stdout}\n${ran.stderr}`)
        const lines = linesOf(ran.stderr)
        assert.strictEqual(lines.length, 1, ran.stderr)
        assert.match(lines[0] ?? "", new RegExp(`^ctxlog-agent: the log is damaged: stream "${stream}" version \\d+: `))
        assert.include(lines[0] ?? "", `ctxlog verify ${stream} --db ${db}`)
        assert.notInclude(ran.stderr, "resume with")
      }
      assert.strictEqual(yield* count(), before)
    })
  )
})
