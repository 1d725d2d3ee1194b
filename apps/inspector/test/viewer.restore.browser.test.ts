// The viewer's Restore button and its decision markers (issue 39, build items 1 and 3), in a real browser:
// playwright-core driving Debian's chromium (headless; the launch of viewer.browser.test.ts) against
// `ctxlog serve`'s server on a real SQLite log of a real transcript imported at a small window. Restore on
// a compaction in effect: confirmed, the messages it replaced are back in the page's window and the log ends
// with `CompactionReverted`; cancelled: nothing is written; on a compaction rolled into a later one: the
// typed refusal is shown and nothing is written; a post from another origin is refused. The tiers'
// decisions not to compact (`CompactionDecided`) are rows and chart dots.
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { EventLog, Window } from "@ctxlog/core"
import { SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { Server, Source } from "../src/index.js"
import { ctxlogInProcess, tempDir, transcripts } from "./support/cli.js"

const executablePath = "/usr/bin/chromium"
const artifacts = fileURLToPath(new URL("../test-artifacts/", import.meta.url))
const stream = "restore-viewer"
const temp = tempDir("ctxlog-viewer-restore-")
const db = join(temp.dir, "log.db")
const profile = mkdtempSync(join(tmpdir(), "ctxlog-chromium-"))
let scope: Scope.CloseableScope | undefined
let browser: BrowserContext | undefined
let url = ""

const bundle = () =>
  new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [fileURLToPath(new URL("../scripts/bundle-ui.mjs", import.meta.url))], (error) =>
      error === null ? resolve() : reject(error)
    )
  })

const read = () =>
  Effect.runPromise(
    Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: db, create: false })))
  )

beforeAll(async () => {
  if (!existsSync(executablePath)) {
    throw new Error(`chromium is not installed at ${executablePath}: run \`apt-get install -y chromium\` (Debian)`)
  }
  mkdirSync(artifacts, { recursive: true })
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
    "4000",
    join(transcripts, "04-mini-swe-agent-django-11910.json")
  ])
  assert.strictEqual(imported.code, 0, imported.stderr)
  scope = Effect.runSync(Scope.make())
  const running = await Effect.runPromise(
    Effect.flatMap(Source.sqlite(db), (source) =>
      Server.start(source, { port: 0, host: "127.0.0.1", restore: { _tag: "sqlite", file: db } })
    ).pipe(Scope.extend(scope))
  )
  url = running.url
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-quic",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ],
    viewport: { width: 1280, height: 800 }
  })
}, 240_000)

afterAll(async () => {
  await browser?.close()
  rmSync(profile, { recursive: true, force: true })
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  temp.cleanup()
})

const open = async (version: number): Promise<Page> => {
  if (browser === undefined) throw new Error("no browser")
  const page = await browser.newPage()
  await page.goto(new URL(`/?stream=${encodeURIComponent(stream)}&v=${version}`, url).href)
  await page.locator('[data-testid="window"]').waitFor()
  return page
}

describe("the viewer's Restore button (issue 39, build item 3)", () => {
  it("restores a compaction in effect, writes nothing when cancelled or refused, and shows the decisions", async () => {
    const envelopes = await read()
    const head = Window.replay(envelopes.map((envelope) => envelope.event))
    const present = new Set(head.history.map((message) => message.id))
    const compactions = envelopes.filter((envelope) => envelope.event._tag === "Compacted")
    const inEffect = compactions.findLast(
      (envelope) =>
        envelope.event._tag === "Compacted" && envelope.event.summary !== null && present.has(envelope.event.summary.id)
    )
    const rolled = compactions.find(
      (envelope) =>
        envelope.event._tag === "Compacted" &&
        envelope.event.summary !== null &&
        !present.has(envelope.event.summary.id)
    )
    if (inEffect?.event._tag !== "Compacted" || rolled === undefined) {
      throw new Error(
        `the import must hold a compaction in effect and a rolled one (${compactions.length} compactions)`
      )
    }

    // The decisions not to compact: one timeline row and one chart dot per CompactionDecided.
    const decided = envelopes.filter((envelope) => envelope.event._tag === "CompactionDecided")
    assert.isAbove(decided.length, 0, "the import's turns record decisions not to compact")
    const page = await open(inEffect.version)
    await page.locator('[data-testid="chart-decision"]').first().waitFor({ state: "attached" })
    assert.strictEqual(await page.locator('[data-testid="chart-decision"]').count(), decided.length)
    const tip = await page.locator('[data-testid="chart-decision"] title').first().textContent()
    assert.match(tip ?? "", /decided not to compact: (prepare|render|complete): (soft|hard|proactive) /)

    // Cancelled: nothing is written.
    page.once("dialog", (dialog) => void dialog.dismiss())
    await page.locator('[data-testid="restore"]').click()
    // The dialog answered inside the click: no post started (the button would be busy), none written.
    assert.isFalse(await page.locator('[data-testid="restore"]').isDisabled())
    assert.strictEqual(await page.locator('[data-testid="restore-result"], [data-testid="restore-error"]').count(), 0)
    assert.strictEqual((await read()).length, envelopes.length)

    // Confirmed: the messages come back, in the log and in the page, which moves to the new head.
    page.once("dialog", (dialog) => void dialog.accept())
    await page.locator('[data-testid="restore"]').click()
    await page.locator('[data-testid="restore-result"], [data-testid="restore-error"]').first().waitFor()
    assert.strictEqual(await page.locator('[data-testid="restore-error"]').count(), 0, "no refusal")
    const after = await read()
    assert.strictEqual(after.length, envelopes.length + 1)
    const reverted = after.at(-1)
    assert.strictEqual(reverted?.event._tag, "CompactionReverted")
    if (reverted?.event._tag !== "CompactionReverted") return
    assert.strictEqual(reverted.event.compactionEventId, inEffect.eventId)
    const back = reverted.event.restored.map((message) => message.id)
    assert.isAbove(back.length, 0)
    await page.locator(`[data-testid="window"][data-version="${reverted.version}"]`).waitFor()
    for (const id of back) {
      assert.strictEqual(await page.locator(`[data-testid="message"][data-id="${id}"]`).count(), 1, id)
    }
    const summaryId = inEffect.event.summary?.id ?? ""
    assert.strictEqual(await page.locator(`[data-testid="message"][data-id="${summaryId}"]`).count(), 0)
    await page.screenshot({ path: join(artifacts, "viewer-restore.png") })
    await page.close()

    // A compaction rolled into a later one: the typed refusal is shown, nothing is written.
    const refused = await open(rolled.version)
    refused.once("dialog", (dialog) => void dialog.accept())
    await refused.locator('[data-testid="restore"]').click()
    const error = refused.locator('[data-testid="restore-error"]')
    await error.waitFor()
    assert.strictEqual(await error.getAttribute("data-tag"), "CompactionNotUndoable")
    assert.include(await error.textContent(), `cannot undo compaction "${rolled.eventId}"`)
    assert.strictEqual((await read()).length, after.length)
    await refused.screenshot({ path: join(artifacts, "viewer-restore-refused.png") })
    await refused.close()

    // Another origin cannot post it (a cross-site form or fetch): refused before anything runs.
    const forged = await fetch(new URL(`/api/streams/${stream}/restore`, url), {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://evil.example" },
      body: JSON.stringify({ compaction: inEffect.eventId })
    })
    assert.strictEqual(forged.status, 403)
    const bad = await fetch(new URL(`/api/streams/${stream}/restore`, url), {
      method: "POST",
      headers: { "content-type": "application/json", origin: new URL(url).origin },
      body: JSON.stringify({ compaction: "" })
    })
    assert.strictEqual(bad.status, 400)
    assert.strictEqual((await read()).length, after.length)
  }, 240_000)
})
