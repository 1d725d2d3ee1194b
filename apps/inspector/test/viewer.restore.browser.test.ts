// The viewer's Restore button and its decision markers (issue 39, build items 1 and 3), in a real browser:
// playwright-core driving Debian's chromium (headless; the launch of viewer.browser.test.ts) against
// `ctxlog serve`'s server on a real SQLite log of a real transcript imported at a small window. Restore on
// a compaction in effect: confirmed, the messages it replaced are back in the page's window and the log ends
// with `CompactionReverted`; cancelled: nothing is written; on a compaction rolled into a later one: the
// typed refusal is shown and nothing is written; a post from another origin is refused. The tiers'
// decisions not to compact (`CompactionDecided`) are rows and chart dots.
import { join } from "node:path"
import { EventLog, Window } from "@ctxlog/core"
import { SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { BrowserContext, Page } from "playwright-core"
import { importTranscript, tempDir } from "./support/cli.js"
import { artifacts, startViewer, type Viewer } from "./support/viewer.js"

const stream = "restore-viewer"
const temp = tempDir("ctxlog-viewer-restore-")
const db = join(temp.dir, "log.db")
let viewer: Viewer | undefined
let browser: BrowserContext | undefined
let url = ""

const read = () =>
  Effect.runPromise(
    Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: db, create: false })))
  )

beforeAll(async () => {
  await importTranscript({ db, stream, budget: 4000, file: "04-mini-swe-agent-django-11910.json" })
  viewer = await startViewer(db, { restore: { _tag: "sqlite", file: db } })
  url = viewer.url
  browser = viewer.browser
}, 240_000)

afterAll(async () => {
  await viewer?.close()
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
