// Issue 25 item 1: capture the environment snapshot of a real git repository in a temp directory, and
// of a directory that is not one.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TokenCounter } from "@ctxlog/core"
import { EnvSnapshot as Render } from "@ctxlog/providers"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as TestClock from "effect/TestClock"
import { EnvSnapshot } from "../src/index.js"

const run = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", args, {
    cwd,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.invalid",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.invalid"
    }
  })

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "ctxlog-env-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("EnvSnapshot.capture", () => {
  it.scoped("a git repository: branch, short status, changed files relative to the workspace, task, date", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      run(dir, "init", "-q", "-b", "feature/parser")
      mkdirSync(join(dir, "src"))
      writeFileSync(join(dir, "src", "parser.ts"), "export const parse = () => null\n")
      run(dir, "add", ".")
      run(dir, "commit", "-q", "-m", "first")
      writeFileSync(join(dir, "src", "parser.ts"), "export const parse = () => 1\n")
      writeFileSync(join(dir, "notes.md"), "new\n")
      yield* TestClock.setTime(Date.UTC(2026, 10, 25, 23, 59))
      const snapshot = yield* EnvSnapshot.capture(dir, {
        changedFiles: [join(dir, "notes.md"), "src/parser.ts", join(dir, "notes.md")],
        task: { goal: "fix the parser", todos: ["run the tests"] }
      })
      assert.deepStrictEqual(snapshot, {
        workspace: dir,
        date: "2026-11-25",
        git: { branch: "feature/parser", status: [" M src/parser.ts", "?? notes.md"] },
        changedFiles: ["src/parser.ts", "notes.md"],
        task: { goal: "fix the parser", todos: ["run the tests"] }
      })
      // The schema accepts what capture produced, and it renders as the reminder.
      assert.isTrue(Either.isRight(Render.decode(snapshot)))
      const text = Either.getOrThrow(Render.reminder(snapshot, { maxTokens: 200 }, TokenCounter.heuristic(4).count))
      assert.include(text, "Git branch: feature/parser")
      assert.include(text, "  notes.md")
      // A detached HEAD is named by its commit.
      run(dir, "checkout", "-q", "--detach")
      const detached = yield* EnvSnapshot.capture(dir)
      assert.match(detached.git?.branch ?? "", /^detached at [0-9a-f]{7,}$/)
    })
  )

  it.scoped("a directory that is not a repository has no git state; a missing one is a typed error", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const plain = join(dir, "plain")
      mkdirSync(plain)
      const snapshot = yield* EnvSnapshot.capture(plain, { changedFiles: ["/elsewhere/x.ts"] })
      assert.isUndefined(snapshot.git)
      assert.deepStrictEqual(snapshot.changedFiles, ["/elsewhere/x.ts"])
      const missing = yield* Effect.either(EnvSnapshot.capture(join(dir, "nope")))
      assert.isTrue(Either.isLeft(missing))
      if (Either.isLeft(missing)) assert.strictEqual(missing.left._tag, "CaptureError")
    })
  )
})
