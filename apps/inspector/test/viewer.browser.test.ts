// The web viewer in a real browser: playwright-core driving Debian's chromium (headless) against
// `ctxlog serve`'s server on a real SQLite log. The tests assert what the page shows, against the
// CLI's JSON and core's projection: the window, blame, diff, chart (budget line, compaction and seam
// markers, the selected version), deep links, reload, back/forward, the message pane (full text,
// tokens, origin, tool pair), filter and search, the sticky header, and content shown as text only.
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { EventLog, Message, type WindowEvent } from "@ctxlog/core"
import { Policy } from "@ctxlog/turn"
import { SqliteEventLog } from "@ctxlog/memory"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Scope from "effect/Scope"
import type { BrowserContext, Page } from "playwright-core"
import { Inspect, Server, Source } from "../src/index.js"
import { ctxlogInProcess, importTranscript, tempDir } from "./support/cli.js"
import { artifacts, startViewer, type Viewer } from "./support/viewer.js"

const stream = "ctf"
const tools = "tools"
const xss = `<img src=x onerror="window.__pwned=1">look at this`
const temp = tempDir("ctxlog-viewer-")
const db = join(temp.dir, "log.db")
let viewer: Viewer | undefined
let browser: BrowserContext | undefined
let url = ""
/** Content-Security-Policy violations the browser reported (the page must cause none). */
const violations: Array<string> = []

const message = (id: string, role: Message.Role, parts: ReadonlyArray<Message.Part>, tokens: number) => ({
  id,
  role,
  kind: "chat" as const,
  parts: [...parts],
  tokens
})

/** The "tools" stream: a tool pair, a seam and a message holding markup. */
const toolEvents: ReadonlyArray<WindowEvent.WindowEvent> = [
  { _tag: "SystemPromptSet", id: "t-1", messages: [message("sys", "system", [Message.text("be brief")], 3)] },
  { _tag: "MessageAppended", id: "t-2", message: message("u1", "user", [Message.text("read a.txt please")], 5) },
  {
    _tag: "MessageAppended",
    id: "t-3",
    message: message(
      "a1",
      "assistant",
      [Message.text("reading it"), Message.toolCall("call-1", "read_file", { path: "a.txt" })],
      12
    )
  },
  {
    _tag: "MessageAppended",
    id: "t-4",
    message: message(
      "r1",
      "tool",
      [Message.toolResult("call-1", `hello-from-file ${"line of the file, ".repeat(12)}end of file`)],
      60
    )
  },
  { _tag: "MessageAppended", id: "t-5", message: message("u2", "user", [Message.text("thanks")], 2) },
  {
    _tag: "SeamProduced",
    id: "t-6",
    level: 1,
    replacedIds: ["u2"],
    message: {
      ...message("seam-1", "user", [Message.text("<archived_context>thanks</archived_context>")], 8),
      kind: "seam"
    }
  },
  { _tag: "MessageAppended", id: "t-7", message: message("x1", "user", [Message.text(xss)], 9) }
]

/** A stream with a recorded turn policy: its compaction budget and thresholds go on the chart. */
const policed = "policed"
// The policy's numbers, by hand: 8000-token window less 1000 reserved for the answer = 7000 prompt
// tokens; hard 80% 5600, soft 60% 4200, proactive 50% 3500, target 40% 2800.
const policyOfPoliced = Either.getOrThrow(
  Policy.validate({
    builder: { provider: "openai", model: "gpt-4.1", contextWindow: 8000, maxOutputTokens: 1000 },
    compaction: { softThreshold: 0.6, hardThreshold: 0.8, proactiveThreshold: 0.5, targetRatio: 0.4 }
  })
)
const policedEvents: ReadonlyArray<WindowEvent.WindowEvent> = [
  { _tag: "TurnPolicySet", id: "p-1", policy: Policy.toJson(policyOfPoliced) },
  { _tag: "SystemPromptSet", id: "p-2", messages: [message("p-sys", "system", [Message.text("be brief")], 400)] },
  ...[1, 2, 3, 4, 5].map(
    (n): WindowEvent.WindowEvent => ({
      _tag: "MessageAppended",
      id: `p-${n + 2}`,
      message: message(`p-u${n}`, n % 2 === 1 ? "user" : "assistant", [Message.text(`message ${n}`)], 900)
    })
  )
]

const appendEvents = (
  filename: string,
  name: string,
  events: ReadonlyArray<WindowEvent.WindowEvent>,
  expected: number
) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* SqliteEventLog.make({ filename })
        yield* Context.get(context, EventLog.EventLog).append(name, events, expected)
      })
    )
  )

beforeAll(async () => {
  await importTranscript({ db, stream, budget: 6000, file: "01-sweagent-enigma-ctf-i-got-id.json" })
  await appendEvents(db, tools, toolEvents, 0)
  await appendEvents(db, policed, policedEvents, 0)
  viewer = await startViewer(db)
  url = viewer.url
  browser = viewer.browser
}, 180_000)

afterAll(async () => {
  await viewer?.close()
  temp.cleanup()
})

/** A fresh page that records CSP violations and page errors. */
const open = async (path: string): Promise<Page> => {
  if (browser === undefined) throw new Error("no browser")
  const page = await browser.newPage()
  page.on("console", (entry) => {
    if (entry.text().includes("Content Security Policy")) violations.push(entry.text())
  })
  page.on("pageerror", (error) => violations.push(`page error: ${error.message}`))
  await page.goto(new URL(path, url).href)
  return page
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null ? Object.fromEntries(Object.entries(value)) : {}
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const cli = async (args: ReadonlyArray<string>) =>
  JSON.parse((await ctxlogInProcess([...args, "--db", db, "--json"])).stdout)
const numberOf = async (page: Page, selector: string, attribute: string) =>
  Number(await page.locator(selector).first().getAttribute(attribute))

/** The window at `at` from core's projection (what the page must show). */
const windowAt = (at: number, name = stream) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(Source.sqlite(db), (source) => Inspect.windowAt(source, name, at)).pipe(
        Effect.map((loaded) => loaded.window)
      )
    )
  )

/** Wait until the row of `version` is in the timeline's visible area (a deep link scrolls to it). */
const inTimeline = (page: Page, version: number) =>
  page.waitForFunction((v) => {
    const row = document.querySelector(`[data-testid="event-row"][data-version="${v}"]`)
    const timeline = document.querySelector('[data-testid="timeline"]')
    if (row === null || timeline === null) return false
    const r = row.getBoundingClientRect()
    const t = timeline.getBoundingClientRect()
    return r.top >= t.top - 1 && r.bottom <= t.bottom + 1
  }, version)

/** The place the page shows: its URL's state, the selected row, the window, the tab. */
const shown = async (page: Page) => ({
  search: new URL(page.url()).search,
  window: await page.locator('[data-testid="window"]').getAttribute("data-version"),
  selectedRow: await page.locator('[data-testid="event-row"][aria-selected="true"]').getAttribute("data-version"),
  input: await page.locator('[data-testid="version-input"]').inputValue()
})

describe("ctxlog serve in a browser", () => {
  it("select a version on the timeline: window, blame, diff and chart show the query numbers", async () => {
    const at = 20
    const expected = record(await cli(["window", "--at", String(at), stream]))
    const expectedWindow = record(expected.window)
    const blame = record(await cli(["blame", "--at", String(at), stream]))
    const renders = list(await cli(["events", stream, "--type", "PromptRendered"]))
    const page = await open("/")
    await page.locator(`[data-testid="stream-item"][data-stream="${stream}"]`).click()
    // The page opens at the head, its row in view; scroll the timeline back to the version.
    await page.locator('[data-testid="event-row"]').first().waitFor()
    await page.locator('[data-testid="timeline"]').evaluate((node) => node.scrollTo(0, 0))
    await page.locator(`[data-testid="event-row"][data-version="${at}"]`).click()
    const windowView = page.locator(`[data-testid="window"][data-version="${at}"]`)
    await windowView.waitFor()
    assert.strictEqual(Number(await windowView.getAttribute("data-total")), record(expectedWindow.tokens).total)
    const history = list(expectedWindow.history).map(record)
    assert.strictEqual(
      await numberOf(page, '[data-testid="partition-history"]', "data-tokens"),
      history.reduce((total, row) => total + Number(row.tokens), 0)
    )
    assert.strictEqual(await page.locator('[data-testid="message"]').count(), list(blame.messages).length)
    // Blame on hover: every message's tooltip names the event that put it there (and the last change).
    for (const row of list(blame.messages).map(record).slice(0, 12)) {
      const added = record(row.addedBy)
      const changed = row.lastChangedBy === null ? null : record(row.lastChangedBy)
      const shownMessage = page.locator(`[data-testid="message"][data-id="${String(row.id)}"]`)
      await shownMessage.hover()
      assert.strictEqual(
        await shownMessage.getAttribute("title"),
        `${String(added.action)} by v${String(added.version)} ${String(added.type)}${changed === null ? "" : `; ${String(changed.action)} by v${String(changed.version)} ${String(changed.type)}`}`
      )
    }
    for (const line of list(record(expected.usage).lines).map(record)) {
      const usage = `[data-testid="usage-line"][data-name="${String(line.name)}"]`
      assert.strictEqual(await numberOf(page, usage, "data-tokens"), line.tokens)
    }
    // The chart: one point per render, the budget, the total of the last render at or before the selection.
    const chart = page.locator('[data-testid="chart"][data-points]:not([data-points="0"])')
    await chart.waitFor()
    assert.strictEqual(Number(await chart.getAttribute("data-points")), renders.length)
    assert.include(await page.locator(".chart h3").textContent(), `${renders.length} renders`)
    assert.strictEqual(Number(await chart.getAttribute("data-budget")), 6000)
    const lastRender = renders
      .map(record)
      .filter((line) => Number(line.version) <= at)
      .at(-1)
    const rendered = record(await cli(["render", "--at", String(at), stream]))
    assert.strictEqual(rendered.version, lastRender?.version)
    // The render's recorded total, as the event line prints it ("provider/model N tokens sha256 …").
    const recordedTotal = Number(/ (\d+) tokens /.exec(String(lastRender?.summary))?.[1])
    assert.strictEqual(Number(await chart.getAttribute("data-total-at-selected")), recordedTotal)
    // Diff against the previous version, in its tab.
    await page.locator('[data-testid="tab-diff"]').click()
    const diff = page.locator('[data-testid="diff"]')
    await diff.waitFor()
    const expectedDiff = record(await cli(["diff", stream, String(at - 1), String(at)]))
    assert.strictEqual(Number(await diff.getAttribute("data-added")), list(expectedDiff.added).length)
    // The rendered request rebuilds and verifies in the viewer too.
    await page.locator('[data-testid="tab-render"]').click()
    const status = page.locator('[data-testid="render-status"]')
    await status.waitFor()
    assert.include(await status.textContent(), "verified sha256")
    await page.close()
  })

  it("deep links open the right place and a reload keeps it", async () => {
    const page = await open(`/?stream=${stream}&v=30&view=diff`)
    await page.locator('[data-testid="diff"][data-to="30"]').waitFor()
    assert.strictEqual(await page.locator('[data-testid="diff"]').getAttribute("data-from"), "29")
    assert.strictEqual(await page.locator('[data-testid="tab-diff"]').getAttribute("aria-pressed"), "true")
    assert.strictEqual(await page.locator('[data-testid="stream-item"].active').getAttribute("data-stream"), stream)
    assert.strictEqual(await page.locator('[data-testid="version-input"]').inputValue(), "30")
    const row = page.locator('[data-testid="event-row"][data-version="30"]')
    await inTimeline(page, 30)
    assert.strictEqual(await row.getAttribute("aria-selected"), "true")
    assert.strictEqual(await page.locator('[data-testid="chart-selected"]').getAttribute("data-version"), "30")
    // A deep link to a late version scrolls the timeline to its row.
    await page.goto(new URL(`/?stream=${stream}&v=90`, url).href)
    await page.locator('[data-testid="window"][data-version="90"]').waitFor()
    await inTimeline(page, 90)
    await page.reload()
    await page.locator('[data-testid="window"][data-version="90"]').waitFor()
    await inTimeline(page, 90)
    assert.deepStrictEqual(await shown(page), {
      search: `?stream=${stream}&v=90`,
      window: "90",
      selectedRow: "90",
      input: "90"
    })
    await page.close()
  })

  it("back and forward move through the places visited", async () => {
    const page = await open(`/?stream=${stream}&v=10`)
    await page.locator('[data-testid="window"][data-version="10"]').waitFor()
    await page.locator('[data-testid="event-row"][data-version="11"]').click()
    await page.locator('[data-testid="window"][data-version="11"]').waitFor()
    await page.locator('[data-testid="next"]').click()
    await page.locator('[data-testid="window"][data-version="12"]').waitFor()
    await page.locator('[data-testid="tab-diff"]').click()
    await page.locator('[data-testid="diff"][data-to="12"]').waitFor()
    assert.strictEqual(new URL(page.url()).search, `?stream=${stream}&v=12&view=diff`)
    await page.goBack()
    await page.locator('[data-testid="window"][data-version="12"]').waitFor()
    assert.strictEqual(await page.locator('[data-testid="diff"]').count(), 0)
    await page.goBack()
    await page.locator('[data-testid="window"][data-version="11"]').waitFor()
    assert.strictEqual((await shown(page)).selectedRow, "11")
    await page.goBack()
    await page.locator('[data-testid="window"][data-version="10"]').waitFor()
    assert.deepStrictEqual(await shown(page), {
      search: `?stream=${stream}&v=10`,
      window: "10",
      selectedRow: "10",
      input: "10"
    })
    await page.goForward()
    await page.locator('[data-testid="window"][data-version="11"]').waitFor()
    await page.goForward()
    await page.goForward()
    await page.locator('[data-testid="diff"][data-to="12"]').waitFor()
    await page.close()
  })

  it("the message pane shows a message whole: full text, tokens, origin and its tool pair", async () => {
    const at = 60
    const window = await windowAt(at)
    const results = new Map(
      window.history.flatMap((m) => Message.toolResultsOf(m).map((result) => [result.toolCallId, m] as const))
    )
    const caller = window.history.find((m) => Message.toolCallsOf(m).some((call) => results.has(call.id)))
    assert.isDefined(caller, "a tool call with its result in the window at v60")
    if (caller === undefined) return
    const call = Message.toolCallsOf(caller).find((candidate) => results.has(candidate.id))
    const answer = call === undefined ? undefined : results.get(call.id)
    if (call === undefined || answer === undefined) return
    const blame = new Map(
      list(record(await cli(["blame", "--at", String(at), stream])).messages).map((row) => [
        String(record(row).id),
        record(row)
      ])
    )
    const page = await open(`/?stream=${stream}&v=${at}`)
    await page.locator(`[data-testid="message"][data-id="${caller.id}"]`).click()
    const pane = page.locator(`[data-testid="message-pane"][data-id="${caller.id}"]`)
    await pane.locator('[data-testid="message-tokens"]').waitFor()
    assert.include(new URL(page.url()).search, `msg=${encodeURIComponent(caller.id)}`)
    assert.strictEqual(
      Number(await pane.locator('[data-testid="message-tokens"]').getAttribute("data-tokens")),
      caller.tokens
    )
    const added = record(blame.get(caller.id)?.addedBy)
    assert.include(
      await pane.locator('[data-testid="message-origin"]').textContent(),
      `added by v${String(added.version)} ${String(added.type)} (event ${String(added.eventId)})`
    )
    // Every part in full: the text and the call's input, not an 80-character preview.
    const texts = await pane.locator('[data-testid="message-text"]').allTextContents()
    assert.include(texts, JSON.stringify(call.input, null, 2))
    const text = Message.textOf(caller)
    if (text !== "") assert.include(texts, text)
    const pair = pane.locator(`[data-testid="tool-pair"][data-call-id="${call.id}"]`)
    assert.strictEqual(await pair.getAttribute("data-result"), answer.id)
    // Follow the pair to the result: its full content, and the pair back to the call.
    await pair.locator('[data-testid="pair-result"]').click()
    const resultPane = page.locator(`[data-testid="message-pane"][data-id="${answer.id}"]`)
    await resultPane.locator('[data-testid="message-tokens"]').waitFor()
    const content = Message.toolResultsOf(answer).find((result) => result.toolCallId === call.id)?.content ?? ""
    assert.include(await resultPane.locator('[data-testid="message-text"]').allTextContents(), content)
    assert.strictEqual(
      await resultPane.locator(`[data-testid="tool-pair"][data-call-id="${call.id}"]`).getAttribute("data-call"),
      caller.id
    )
    // Back returns to the call; closing the pane drops it from the URL.
    await page.goBack()
    await page.locator(`[data-testid="message-pane"][data-id="${caller.id}"]`).waitFor()
    await page.locator('[data-testid="message-close"]').click()
    assert.strictEqual(await page.locator('[data-testid="message-pane"]').count(), 0)
    assert.notInclude(new URL(page.url()).search, "msg=")
    // A tool result longer than a preview, on the tools stream, is shown whole.
    const tail = await open(`/?stream=${tools}&v=4&msg=r1`)
    const full = tail.locator('[data-testid="message-pane"] [data-testid="message-text"]')
    await full.waitFor()
    assert.isTrue((await full.textContent())?.endsWith("end of file"))
    assert.strictEqual(await tail.locator('[data-testid="tool-pair"]').getAttribute("data-call"), "a1")
    assert.include(await tail.locator('[data-testid="tool-pair"]').textContent(), "read_file")
    await tail.close()
    await page.close()
  })

  it("the chart shows the budget line, the compaction and seam markers and the selected version, its labels unclipped", async () => {
    const lines = list(await cli(["events", stream])).map(record)
    // Compactions and seams are markers; the decisions not to compact are dots (ADR 0128).
    const marks = lines.filter((line) => line.mark === "compaction" || line.mark === "seam")
    assert.isAbove(marks.length, 0)
    const page = await open(`/?stream=${stream}&v=50`)
    await page.locator('[data-testid="window"][data-version="50"]').waitFor()
    const markers = page.locator('[data-testid="chart-marker"]')
    await markers.first().waitFor()
    assert.strictEqual(await markers.count(), marks.length)
    assert.deepStrictEqual(
      await markers.evaluateAll((nodes) =>
        nodes.map((node) => `${node.getAttribute("data-version")} ${node.getAttribute("data-kind")}`)
      ),
      marks.map((line) => `${String(line.version)} ${String(line.mark)}`)
    )
    // The x of a marker's line in the SVG's coordinates (its first line's x1).
    const xOf = async (selector: string) =>
      Number(await page.locator(selector).locator("line").first().getAttribute("x1"))
    // Markers sit at their versions: increasing x, the selected version between its neighbours.
    const xs = await markers.evaluateAll((nodes) =>
      nodes.map((node) => Number(node.querySelector("line")?.getAttribute("x1")))
    )
    for (let i = 1; i < xs.length; i++) assert.isAtLeast(xs[i] ?? 0, xs[i - 1] ?? 0)
    const before = marks.filter((line) => Number(line.version) <= 50).at(-1)
    const after = marks.find((line) => Number(line.version) > 50)
    const selected = page.locator('[data-testid="chart-selected"]')
    assert.strictEqual(await selected.getAttribute("data-version"), "50")
    assert.include(await selected.textContent(), "v50")
    if (before !== undefined)
      assert.isAtLeast(
        await xOf('[data-testid="chart-selected"]'),
        await xOf(`[data-testid="chart-marker"][data-version="${String(before.version)}"]`)
      )
    if (after !== undefined)
      assert.isBelow(
        await xOf('[data-testid="chart-selected"]'),
        await xOf(`[data-testid="chart-marker"][data-version="${String(after.version)}"]`)
      )
    // The budget line: the recorded render spec's window (6000), inside the plot, labelled.
    const budget = page.locator('[data-testid="chart-budget"]')
    assert.strictEqual(await budget.getAttribute("data-value"), "6000")
    assert.include(await budget.textContent(), "window 6000")
    assert.include(await page.locator(".legend").textContent(), "context window (render spec)")
    const svg = await page.locator('[data-testid="chart"]').boundingBox()
    const line = await budget.locator("line").boundingBox()
    assert.isTrue(svg !== null && line !== null && line.y > svg.y && line.y < svg.y + svg.height)
    // No text of the chart is clipped by the SVG or the viewport.
    const boxes = await page.locator('[data-testid="chart"] text').evaluateAll((nodes) =>
      nodes.map((node) => {
        const box = node.getBoundingClientRect()
        return { text: node.textContent, left: box.left, right: box.right, top: box.top, bottom: box.bottom }
      })
    )
    assert.isAbove(boxes.length, 6)
    for (const box of boxes) {
      assert.isTrue(
        svg !== null &&
          box.left >= svg.x - 0.5 &&
          box.right <= svg.x + svg.width + 0.5 &&
          box.top >= svg.y - 0.5 &&
          box.bottom <= svg.y + svg.height + 0.5,
        `"${box.text}" is clipped`
      )
      assert.isAtMost(box.right, 1280)
    }
    // Clicking the chart selects the version under the pointer and moves the selected marker.
    const target = marks[0]
    const targetX = await xOf(`[data-testid="chart-marker"][data-version="${String(target?.version)}"]`)
    await page.mouse.click((svg?.x ?? 0) + targetX + 0.5, (svg?.y ?? 0) + (svg?.height ?? 0) / 2)
    await page.locator(`[data-testid="window"][data-version="${String(target?.version)}"]`).waitFor()
    assert.strictEqual(await selected.getAttribute("data-version"), String(target?.version))
    assert.include(new URL(page.url()).search, `v=${String(target?.version)}`)
    // A seam has its own marker.
    await page.goto(new URL(`/?stream=${tools}`, url).href)
    const seam = page.locator('[data-testid="chart-marker"][data-kind="seam"]')
    await seam.waitFor()
    assert.strictEqual(await seam.getAttribute("data-version"), "6")
    assert.strictEqual(await seam.getAttribute("data-type"), "SeamProduced")
    assert.include(await page.locator(".chart h3").textContent(), "7 events (no render recorded)")
    await page.close()
  })

  it("a message holding markup renders as text: no element from it, the text visible", async () => {
    const page = await open(`/?stream=${tools}&v=7&msg=x1`)
    const pane = page.locator('[data-testid="message-pane"] [data-testid="message-text"]')
    await pane.waitFor()
    assert.strictEqual(await pane.textContent(), xss)
    assert.isTrue(await pane.isVisible())
    assert.include(await page.locator('[data-testid="message"][data-id="x1"]').textContent(), "<img src=x")
    assert.include(await page.locator('[data-testid="event-row"][data-version="7"]').textContent(), "<img src=x")
    assert.strictEqual(await page.locator("img").count(), 0)
    assert.strictEqual(await page.locator("[onerror]").count(), 0)
    assert.isUndefined(await page.evaluate(() => Reflect.get(window, "__pwned")))
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: join(artifacts, "viewer-markup.png") })
    await page.close()
  })

  it("filter by event type and search in content; the header stays on screen", async () => {
    const page = await open(`/?stream=${stream}&v=40`)
    await page.locator('[data-testid="window"][data-version="40"]').waitFor()
    await page.locator('[data-testid="type-filter"]').selectOption("Compacted")
    await page.waitForURL((target) => target.search.includes("type=Compacted"))
    const compacted = list(await cli(["events", stream, "--type", "Compacted"])).map((line) =>
      String(record(line).version)
    )
    const rows = page.locator('[data-testid="event-row"]')
    await page.waitForFunction(
      (count) => document.querySelectorAll('[data-testid="event-row"]').length === count,
      compacted.length
    )
    assert.deepStrictEqual(
      await rows.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-version"))),
      compacted
    )
    assert.deepStrictEqual(
      [...new Set(await rows.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-type"))))],
      ["Compacted"]
    )
    // Search: the tools stream's content holds "hello-from-file" in the tool result only.
    await page.goto(new URL(`/?stream=${tools}`, url).href)
    await page.locator('[data-testid="search"]').fill("HELLO-from-file")
    await page.locator('[data-testid="search"]').press("Enter")
    await page.locator('[data-testid="search-count"][data-total="1"]').waitFor()
    assert.include(new URL(page.url()).search, "q=HELLO-from-file")
    assert.deepStrictEqual(await rows.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-version"))), [
      "4"
    ])
    assert.include(await rows.first().textContent(), "hello-from-file line of the file")
    await page.locator('[data-testid="search"]').fill("a.txt")
    await page.locator('[data-testid="search"]').press("Enter")
    await page.locator('[data-testid="search-count"][data-total="2"]').waitFor()
    assert.deepStrictEqual(await rows.evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-version"))), [
      "2",
      "3"
    ])
    // Sticky header: scrolling the panes or the page leaves it at the top.
    await page.goto(new URL(`/?stream=${stream}&v=90`, url).href)
    await page.locator('[data-testid="window"][data-version="90"]').waitFor()
    await page.locator('[data-testid="detail"]').evaluate((node) => node.scrollTo(0, node.scrollHeight))
    await page.locator('[data-testid="timeline"]').evaluate((node) => node.scrollTo(0, 0))
    await page.evaluate(() => window.scrollTo(0, 10_000))
    const header = await page.locator('[data-testid="header"]').boundingBox()
    assert.strictEqual(header?.y, 0)
    assert.isTrue(await page.locator('[data-testid="version-input"]').isVisible())
    mkdirSync(artifacts, { recursive: true })
    await page.screenshot({ path: join(artifacts, "viewer.png") })
    await page.close()
  })

  it("follows a live stream: an append moves the head and the selection", async () => {
    const head = Number(
      record(
        list(await cli(["streams"]))
          .map(record)
          .find((row) => row.stream === stream)
      ).events
    )
    const page = await open(`/?stream=${stream}`)
    await page.locator(`[data-testid="window"][data-version="${head}"]`).waitFor()
    await page.locator('header input[type="checkbox"]').check()
    await appendEvents(
      db,
      stream,
      [
        {
          _tag: "MessageAppended",
          id: "live-1",
          message: message("live-m1", "user", [Message.text("still there?")], 4)
        },
        { _tag: "TurnCompleted", id: "live-2" }
      ],
      head
    )
    await page.locator(`[data-testid="window"][data-version="${head + 2}"]`).waitFor({ timeout: 60_000 })
    await page.close()
  })

  it("a bind beyond loopback: the page opens with the printed URL's token only, and keeps working without it in the address bar", async () => {
    const running = await Effect.runPromise(
      Effect.flatMap(Source.sqlite(db), (source) => Server.start(source, { port: 0, host: "0.0.0.0" })).pipe(
        Scope.extend(viewer?.scope ?? Effect.runSync(Scope.make()))
      )
    )
    const base = `http://127.0.0.1:${running.port}/`
    const page = await open(base)
    assert.include(await page.locator("body").textContent(), "requires its token")
    assert.strictEqual(await page.locator('[data-testid="header"]').count(), 0)
    await page.goto(`${base}?token=${running.token}&stream=${tools}&v=3`)
    await page.locator('[data-testid="window"][data-version="3"]').waitFor()
    assert.strictEqual(new URL(page.url()).search, `?stream=${tools}&v=3`)
    await page.locator('[data-testid="message"][data-id="a1"]').click()
    await page.locator('[data-testid="message-pane"] [data-testid="message-tokens"]').waitFor()
    await page.reload()
    await page.locator('[data-testid="message-pane"] [data-testid="message-tokens"]').waitFor()
    await page.close()
  })

  it("an unknown stream in the URL is said plainly in place of the panes, not loading forever", async () => {
    const page = await open("/?stream=no-such-stream&v=3")
    const said = page.locator('[data-testid="stream-error"]')
    await said.waitFor()
    assert.include(await said.textContent(), 'no stream "no-such-stream"')
    assert.include(await said.textContent(), "Pick one of the streams on the left.")
    assert.strictEqual(await page.locator("text=loading…").count(), 0)
    // The streams are still there to pick from, and picking one shows it.
    await page.screenshot({ path: join(artifacts, "viewer-unknown-stream.png") })
    await page.locator(`[data-testid="stream-item"][data-stream="${stream}"]`).click()
    await page.locator('[data-testid="window"]').waitFor()
    assert.strictEqual(await said.count(), 0)
    await page.close()
  })

  it("the stream list is newest first, and the newest stream opens by default", async () => {
    // "tools" was written first of all; a new message makes it the newest.
    const before = list(await cli(["streams"])).map(record)
    const events = Number(before.find((entry) => entry.stream === tools)?.events)
    await appendEvents(
      db,
      tools,
      [{ _tag: "MessageAppended", id: "t-newest", message: message("u3", "user", [Message.text("newest")], 1) }],
      events
    )
    const listed = list(await cli(["streams"])).map(record)
    const newestFirst = [...listed]
      .sort(
        (a, b) => Number(b.lastActivity) - Number(a.lastActivity) || String(a.stream).localeCompare(String(b.stream))
      )
      .map((entry) => String(entry.stream))
    assert.isAtLeast(newestFirst.length, 2)
    assert.strictEqual(newestFirst[0], tools)
    const page = await open("/")
    await page.locator('[data-testid="stream-item"].active').waitFor()
    const order = await page
      .locator('[data-testid="stream-item"]')
      .evaluateAll((items) => items.map((item) => item.getAttribute("data-stream") ?? ""))
    assert.deepStrictEqual(order, newestFirst)
    assert.strictEqual(
      await page.locator('[data-testid="stream-item"].active').getAttribute("data-stream"),
      newestFirst[0]
    )
    await page.screenshot({ path: join(artifacts, "viewer-streams-newest-first.png") })
    await page.close()
  })

  it("a short message id in msg=, as ctxlog window prints it, opens that message", async () => {
    const at = 60
    const target = (await windowAt(at)).history.at(-1)
    assert.isDefined(target)
    if (target === undefined) return
    // `ctxlog window` prints the end of each id after "…".
    const printed = await ctxlogInProcess(["window", "--db", db, "--at", String(at), stream])
    const short = `…${target.id.slice(-12)}`
    assert.include(printed.stdout, short)
    const page = await open(`/?stream=${stream}&v=${at}&msg=${encodeURIComponent(short)}`)
    const pane = page.locator(`[data-testid="message-pane"][data-id="${target.id}"]`)
    await pane.locator('[data-testid="message-tokens"]').waitFor()
    assert.strictEqual(await page.locator('[data-testid="message-error"]').count(), 0)
    assert.strictEqual(new URL(page.url()).searchParams.get("msg"), target.id)
    assert.strictEqual(
      await pane.locator('[data-testid="message-tokens"]').getAttribute("data-tokens"),
      String(target.tokens)
    )
    await page.screenshot({ path: join(artifacts, "viewer-short-message-id.png") })
    await page.close()
  })

  it("the chart's version label names one version: the selected one, with its window's tokens", async () => {
    // v50 is not a render: the last render at or before it is an earlier version (the label used to
    // say "v50 · N tokens at v48", two versions in one label).
    const renders = list(await cli(["events", stream]))
      .map(record)
      .filter((line) => line.type === "PromptRendered")
    const at = 50
    const lastRender = renders.filter((line) => Number(line.version) <= at).at(-1)
    assert.isDefined(lastRender)
    assert.notStrictEqual(Number(lastRender?.version), at)
    const page = await open(`/?stream=${stream}&v=${at}`)
    const windowPane = page.locator(`[data-testid="window"][data-version="${at}"]`)
    await windowPane.waitFor()
    const total = (await windowAt(at)).tokens.total
    const chart = page.locator(`[data-testid="chart"][data-window-total="${total}"]`)
    await chart.waitFor()
    const label = (await page.locator('[data-testid="chart-selected"] text').textContent()) ?? ""
    assert.strictEqual(label, `v${at} · ${total} tokens in the window`)
    assert.deepStrictEqual(label.match(/\bv\d+/g), [`v${at}`])
    // The same number the window pane shows for that version.
    assert.strictEqual(Number(await windowPane.getAttribute("data-total")), total)
    await page.screenshot({ path: join(artifacts, "viewer-version-label.png") })
    await page.close()
  })

  it("a view=render deep link opens the render rebuilt and verified, with no click; a version without a render says so", async () => {
    const at = 50
    const expected = record(await cli(["render", "--at", String(at), stream]))
    const page = await open(`/?stream=${stream}&v=${at}&view=render`)
    const status = page.locator('[data-testid="render-status"]')
    await status.waitFor()
    assert.strictEqual(await status.getAttribute("data-verified"), "true")
    assert.strictEqual(Number(await status.getAttribute("data-at")), expected.version)
    assert.include(await status.textContent(), `verified sha256 ${String(expected.sha256)}`)
    assert.isAbove(((await page.locator('[data-testid="render"] pre').textContent()) ?? "").length, 10)
    assert.strictEqual(await page.locator('[data-testid="tab-render"]').getAttribute("aria-pressed"), "true")
    await page.screenshot({ path: join(artifacts, "viewer-render-deep-link.png") })
    // Another version (the arrow keys of the header) rebuilds again, at that version.
    await page.locator('[data-testid="prev"]').click()
    await page.locator(`[data-testid="render"][data-version="${at - 1}"] [data-testid="render-status"]`).waitFor()
    // A stream with no render: said in the pane, not an empty pane.
    await page.goto(new URL(`/?stream=${tools}&v=7&view=render`, url).href)
    const error = page.locator('[data-testid="render-error"]')
    await error.waitFor()
    assert.match((await error.textContent()) ?? "", /render/i)
    await page.close()
  })

  it("with the message pane open the window pane keeps its room (1280 and 1024 wide)", async () => {
    const at = 60
    const target = (await windowAt(at)).history.at(-1)
    assert.isDefined(target)
    const page = await open(`/?stream=${stream}&v=${at}&msg=${encodeURIComponent(target?.id ?? "")}`)
    const widths = async () => {
      await page.locator('[data-testid="message-pane"] [data-testid="message-tokens"]').waitFor()
      const box = async (selector: string) => (await page.locator(selector).boundingBox()) ?? undefined
      return {
        window: await box('[data-testid="detail"]'),
        message: await box('[data-testid="message-pane"]'),
        timeline: await page.locator('[data-testid="timeline"]').isVisible()
      }
    }
    const wide = await widths()
    assert.isAtLeast(wide.window?.width ?? 0, 420)
    assert.isAtLeast(wide.window?.width ?? 0, wide.message?.width ?? Number.POSITIVE_INFINITY)
    assert.isAtLeast(wide.message?.width ?? 0, 280)
    assert.isTrue(wide.timeline)
    assert.isAtMost((wide.message?.x ?? 0) + (wide.message?.width ?? 0), 1280)
    // The window rows keep their previews readable: the preview is at least 150 px wide.
    const preview = await page.locator('[data-testid="window"] .message .preview').first().boundingBox()
    assert.isAtLeast(preview?.width ?? 0, 150)
    await page.screenshot({ path: join(artifacts, "viewer-window-pane-1280.png") })
    await page.setViewportSize({ width: 1024, height: 768 })
    const narrow = await widths()
    assert.isAtLeast(narrow.window?.width ?? 0, 420)
    assert.isAtLeast(narrow.message?.width ?? 0, 280)
    assert.isAtMost((narrow.message?.x ?? 0) + (narrow.message?.width ?? 0), 1024)
    await page.screenshot({ path: join(artifacts, "viewer-window-pane-1024.png") })
    await page.close()
  })

  it("the chart shows the compaction budget and its thresholds from the recorded turn policy", async () => {
    const page = await open(`/?stream=${policed}`)
    const group = page.locator('[data-testid="chart-compaction"]')
    await group.waitFor()
    assert.strictEqual(await group.getAttribute("data-budget"), "7000")
    assert.strictEqual(await group.getAttribute("data-version"), "1")
    const lines = await page.locator('[data-testid="compaction-line"]').evaluateAll((nodes) =>
      nodes.map((node) => ({
        kind: node.getAttribute("data-kind"),
        tokens: Number(node.getAttribute("data-tokens")),
        y: Number(node.getAttribute("data-y")),
        text: node.querySelector("text")?.textContent ?? ""
      }))
    )
    assert.deepStrictEqual(
      lines.map((line) => [line.kind, line.tokens, line.text]),
      [
        ["budget", 7000, "compaction budget 7000"],
        ["hard", 5600, "hard 80% · 5600"],
        ["soft", 4200, "soft 60% · 4200"],
        ["proactive", 3500, "proactive 50% · 3500"],
        ["target", 2800, "target 40% · 2800"]
      ]
    )
    // Higher token counts sit higher (smaller y), and every line is inside the plot.
    for (let i = 1; i < lines.length; i++) assert.isAbove(lines[i]?.y ?? 0, lines[i - 1]?.y ?? 0)
    assert.include(
      (await page.locator('[data-testid="compaction-legend"]').textContent()) ?? "",
      "compaction budget and thresholds (turn policy at v1)"
    )
    // No label is clipped by the SVG, and no two labels overlap.
    const svg = await page.locator('[data-testid="chart"]').boundingBox()
    const boxes = await page.locator('[data-testid="compaction-line"] text').evaluateAll((nodes) =>
      nodes.map((node) => {
        const box = node.getBoundingClientRect()
        return { text: node.textContent, left: box.left, right: box.right, top: box.top, bottom: box.bottom }
      })
    )
    for (const box of boxes) {
      assert.isTrue(
        svg !== null &&
          box.left >= svg.x &&
          box.right <= svg.x + svg.width &&
          box.top >= svg.y &&
          box.bottom <= svg.y + svg.height,
        `"${box.text}" is clipped`
      )
    }
    for (let i = 1; i < boxes.length; i++) assert.isAtLeast(boxes[i]?.top ?? 0, (boxes[i - 1]?.bottom ?? 0) - 1)
    // Nor do they run into the selected version's label, above the plot.
    const selectedLabel = await page.locator('[data-testid="chart-selected"] text').boundingBox()
    for (const box of boxes) {
      assert.isAtLeast(
        box.top,
        (selectedLabel?.y ?? 0) + (selectedLabel?.height ?? 0) - 1,
        `"${box.text}" overlaps the label`
      )
    }
    await page.screenshot({ path: join(artifacts, "viewer-compaction-thresholds.png") })
    // A stream without a turn policy (the hand-written "tools") says why the chart has no thresholds.
    await page.goto(new URL(`/?stream=${tools}`, url).href)
    const none = page.locator('[data-testid="compaction-legend"]', { hasText: "no turn policy recorded" })
    await none.waitFor()
    assert.strictEqual(await page.locator('[data-testid="chart-compaction"]').count(), 0)
    await page.close()
  })

  it("the page caused no Content-Security-Policy violation and no error", () => {
    assert.deepStrictEqual(violations, [])
  })
})
