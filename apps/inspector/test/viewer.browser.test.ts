// The web viewer in a real browser: playwright-core driving Debian's chromium (headless) against
// `ctxlog serve`'s server on a real SQLite log. Selects a version on the timeline and checks the
// window, blame and chart against the same queries the CLI prints; saves a screenshot artifact.
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { EventLog } from "@ctxlog/core"
import { SqliteEventLog } from "@ctxlog/memory"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { chromium } from "playwright-core"
import { Server, Source } from "../src/index.js"
import { ctxlogInProcess, tempDir, transcripts } from "./support/cli.js"

const executablePath = "/usr/bin/chromium"
const artifacts = fileURLToPath(new URL("../test-artifacts/", import.meta.url))
const stream = "ctf"
const temp = tempDir("ctxlog-viewer-")
const db = join(temp.dir, "log.db")
let scope: Scope.CloseableScope | undefined
let url = ""

const bundle = () =>
  new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [fileURLToPath(new URL("../scripts/bundle-ui.mjs", import.meta.url))], (error) =>
      error === null ? resolve() : reject(error)
    )
  })

beforeAll(async () => {
  await bundle()
  const imported = await ctxlogInProcess([
    "import",
    "--format",
    "openai-chat",
    "--db",
    db,
    "--stream",
    stream,
    "--budget",
    "6000",
    join(transcripts, "01-sweagent-enigma-ctf-i-got-id.json")
  ])
  assert.strictEqual(imported.code, 0, imported.stderr)
  scope = Effect.runSync(Scope.make())
  const running = await Effect.runPromise(
    Effect.flatMap(Source.sqlite(db), (source) => Server.start(source, { port: 0, host: "127.0.0.1" })).pipe(
      Scope.extend(scope)
    )
  )
  url = running.url
}, 180_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  temp.cleanup()
})

/** The stream's head version, read with the CLI. */
const currentHead = async () => {
  const streams: unknown = JSON.parse((await ctxlogInProcess(["streams", "--db", db, "--json"])).stdout)
  return Array.isArray(streams) ? Number(record(streams[0]).events) : 0
}

/** Append a user message and a turn end, as a running agent would (a separate writer on the file). */
const appendTurn = (filename: string, name: string, expected: number) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* SqliteEventLog.make({ filename })
        yield* Context.get(context, EventLog.EventLog).append(
          name,
          [
            {
              _tag: "MessageAppended",
              id: "live-1",
              message: {
                id: "live-m1",
                role: "user",
                kind: "chat",
                parts: [{ type: "text", text: "still there?" }],
                tokens: 4
              }
            },
            { _tag: "TurnCompleted", id: "live-2" }
          ],
          expected
        )
      })
    )
  )

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? Object.fromEntries(Object.entries(value)) : {}
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

describe("ctxlog serve in a browser", () => {
  it("select a version on the timeline: window, blame, diff and chart show the query numbers", async () => {
    if (!existsSync(executablePath)) {
      assert.fail(`chromium is not installed at ${executablePath}: run \`apt-get install -y chromium\` (Debian)`)
    }
    const at = 20
    const expected = record(
      JSON.parse((await ctxlogInProcess(["window", "--db", db, "--at", String(at), stream, "--json"])).stdout)
    )
    const expectedWindow = record(expected.window)
    const blame = record(
      JSON.parse((await ctxlogInProcess(["blame", "--db", db, "--at", String(at), stream, "--json"])).stdout)
    )
    const renders = list(
      JSON.parse((await ctxlogInProcess(["events", "--db", db, stream, "--type", "PromptRendered", "--json"])).stdout)
    )
    const profile = mkdtempSync(join(tmpdir(), "ctxlog-chromium-"))
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run"
      ],
      viewport: { width: 1400, height: 1000 }
    })
    try {
      const page = context.pages()[0] ?? (await context.newPage())
      await page.goto(url)
      await page.locator(`[data-testid="stream-item"][data-stream="${stream}"]`).waitFor()
      await page.locator(`[data-testid="event-row"][data-version="${at}"]`).click()
      const windowView = page.locator(`[data-testid="window"][data-version="${at}"]`)
      await windowView.waitFor()
      assert.strictEqual(Number(await windowView.getAttribute("data-total")), record(expectedWindow.tokens).total)
      const history = list(expectedWindow.history).map(record)
      assert.strictEqual(
        Number(await page.locator('[data-testid="partition-history"]').getAttribute("data-tokens")),
        history.reduce((total, row) => total + Number(row.tokens), 0)
      )
      assert.strictEqual(await page.locator('[data-testid="message"]').count(), list(blame.messages).length)
      // Blame on hover: every message's tooltip names the event that put it there (and the last change).
      for (const row of list(blame.messages).map(record).slice(0, 12)) {
        const added = record(row.addedBy)
        const changed = row.lastChangedBy === null ? null : record(row.lastChangedBy)
        const message = page.locator(`[data-testid="message"][data-id="${String(row.id)}"]`)
        await message.hover()
        assert.strictEqual(
          await message.getAttribute("title"),
          `${String(added.action)} by v${String(added.version)} ${String(added.type)}${changed === null ? "" : `; ${String(changed.action)} by v${String(changed.version)} ${String(changed.type)}`}`
        )
      }
      // Usage lines are the CLI's.
      const usage = list(record(expected.usage).lines).map(record)
      for (const line of usage) {
        const shown = page.locator(`[data-testid="usage-line"][data-name="${String(line.name)}"]`)
        assert.strictEqual(Number(await shown.getAttribute("data-tokens")), line.tokens)
      }
      // The chart: one point per render, the budget line, and the total of the last render at or before the selection.
      const chart = page.locator('[data-testid="chart"]')
      assert.strictEqual(Number(await chart.getAttribute("data-points")), renders.length)
      assert.strictEqual(Number(await chart.getAttribute("data-budget")), 6000)
      const lastRender = renders
        .map(record)
        .filter((line) => Number(line.version) <= at)
        .at(-1)
      const rendered = record(
        JSON.parse((await ctxlogInProcess(["render", "--db", db, "--at", String(at), stream, "--json"])).stdout)
      )
      assert.strictEqual(rendered.version, lastRender?.version)
      assert.isAbove(await chart.locator("canvas").count(), 0)
      // Diff against the previous version.
      const diff = page.locator('[data-testid="diff"]')
      await diff.waitFor()
      const expectedDiff = record(
        JSON.parse((await ctxlogInProcess(["diff", "--db", db, stream, String(at - 1), String(at), "--json"])).stdout)
      )
      assert.strictEqual(Number(await diff.getAttribute("data-added")), list(expectedDiff.added).length)
      // The rendered request rebuilds and verifies in the viewer too.
      await page.locator('[data-testid="render"] button').click()
      const status = page.locator('[data-testid="render-status"]')
      await status.waitFor()
      assert.include(await status.textContent(), "verified sha256")
      // Live tail: an agent appends to the log while the page is open; with "follow live" the head and
      // the selection move to the new version.
      const head = await currentHead()
      await page.locator('header input[type="checkbox"]').check()
      await appendTurn(db, stream, head)
      await page.locator(`[data-testid="window"][data-version="${head + 2}"]`).waitFor({ timeout: 60_000 })
      mkdirSync(artifacts, { recursive: true })
      await page.screenshot({ path: join(artifacts, "viewer.png"), fullPage: true })
      assert.isTrue(existsSync(join(artifacts, "viewer.png")))
    } finally {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  })
})
