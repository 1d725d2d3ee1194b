// The viewer's cache lane (issue 37) and policy comparison (issue 38) in a real browser: playwright-core
// driving Debian's chromium (headless) against `ctxlog serve`'s server on a real SQLite log made by
// `ctxlog import`, with a candidate policy given as `serve --policy` gives it. What the page shows is
// checked against the CLI's JSON: `ctxlog cache --json` (each call's read / write / uncached tokens and
// the cause of each miss) and `ctxlog whatif --policy --json` (each policy's calls, dollars and lost
// items). Each test writes a screenshot to test-artifacts/.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { BrowserContext, Page } from "playwright-core"
import * as SweepCli from "../src/SweepCli.js"
import type * as SweepReport from "../src/SweepReport.js"
import { ctxlogInProcess, importTranscript, tempDir } from "./support/cli.js"
import { artifacts, startViewer, type Viewer } from "./support/viewer.js"

const stream = "ctf"
const temp = tempDir("ctxlog-viewer-lanes-")
const db = join(temp.dir, "log.db")
const tight = join(temp.dir, "tight.json")
let viewer: Viewer | undefined
let browser: BrowserContext | undefined
let url = ""
const errors: Array<string> = []

beforeAll(async () => {
  await importTranscript({ db, stream, budget: 6000, file: "01-sweagent-enigma-ctf-i-got-id.json" })
  // A window too small for the tool outputs the answers used: it prunes and compacts them away. (At
  // 2,500 the transcript's first ask alone does not fit beside its system prompt: the fit cuts it to its
  // head and tail, ADR 0124.)
  writeFileSync(
    tight,
    JSON.stringify({ builder: { provider: "openai", model: "gpt-4.1", contextWindow: 2500 }, compaction: {} })
  )
  const policies = [await Effect.runPromise(SweepCli.candidateOf(tight))]
  viewer = await startViewer(db, { policies }, { width: 1280, height: 1000 })
  url = viewer.url
  browser = viewer.browser
}, 300_000)

afterAll(async () => {
  await viewer?.close()
  temp.cleanup()
})

const open = async (path: string): Promise<Page> => {
  if (browser === undefined) throw new Error("no browser")
  const page = await browser.newPage()
  page.on("pageerror", (error) => errors.push(`page error: ${error.message}`))
  page.on("console", (entry) => {
    if (entry.text().includes("Content Security Policy")) errors.push(entry.text())
  })
  await page.goto(new URL(path, url).href)
  return page
}

interface CacheCall {
  readonly version: number
  readonly predicted: { readonly cacheRead: number; readonly cacheWrite: number; readonly uncached: number }
  readonly cause: { readonly kind: string; readonly divergedAt: string | null } | null
}

describe("the viewer's cache lane and policy comparison", () => {
  it("the cache lane: a bar per model call on the chart's version axis with ctxlog cache's read / write / uncached tokens and each miss's cause; a bar selects its render", async () => {
    const printed = await ctxlogInProcess(["cache", "--db", db, "--json", stream])
    assert.strictEqual(printed.code, 0, printed.stderr)
    const report: { readonly calls: ReadonlyArray<CacheCall> } = JSON.parse(printed.stdout)
    assert.isAbove(report.calls.length, 5)
    const page = await open(`/?stream=${stream}`)
    await page.waitForSelector(`[data-testid="cache-lane"][data-calls="${report.calls.length}"]`)
    const bars = await page.locator('[data-testid="cache-bar"]').evaluateAll((nodes) =>
      nodes.map((node) => ({
        version: Number(node.getAttribute("data-key")),
        read: Number(node.getAttribute("data-read")),
        write: Number(node.getAttribute("data-write")),
        uncached: Number(node.getAttribute("data-uncached")),
        cause: node.getAttribute("data-cause") ?? "",
        x: Number(node.querySelector("rect")?.getAttribute("x")),
        title: node.querySelector("title")?.textContent ?? ""
      }))
    )
    assert.deepStrictEqual(
      bars.map(({ version, read, write, uncached, cause }) => ({ version, read, write, uncached, cause })),
      report.calls.map((call) => ({
        version: call.version,
        read: call.predicted.cacheRead,
        write: call.predicted.cacheWrite,
        uncached: call.predicted.uncached,
        cause: call.cause?.kind ?? ""
      }))
    )
    // On the version axis: later renders further right.
    for (const [index, bar] of bars.entries()) if (index > 0) assert.isAbove(bar.x, bars[index - 1]?.x ?? 0)
    // Misses are named (the log compacts and prunes at a 6,000-token budget), each in its bar's title.
    const missed = report.calls.filter((call) => call.cause !== null)
    assert.isAbove(missed.length, 0)
    for (const call of missed) {
      const bar = bars.find((candidate) => candidate.version === call.version)
      assert.include(bar?.title ?? "", call.cause?.kind ?? "?")
    }
    // A bar selects its render; the line under the lane says that render's split and cause.
    const target = missed.at(-1) ?? report.calls[0]
    assert.isDefined(target)
    if (target === undefined) return
    await page.locator(`[data-testid="cache-bar"][data-key="${target.version}"]`).dispatchEvent("click")
    await page.waitForSelector(`[data-testid="chart-selected"][data-version="${target.version}"]`)
    const cause = page.locator('[data-testid="cache-cause"]')
    assert.strictEqual(await cause.getAttribute("data-version"), String(target.version))
    assert.strictEqual(await cause.getAttribute("data-kind"), target.cause?.kind ?? "")
    const text = (await cause.textContent()) ?? ""
    assert.include(text, `render v${target.version}`)
    assert.include(text, `read ${target.predicted.cacheRead} / write ${target.predicted.cacheWrite}`)
    if (target.cause !== null) assert.include(text, target.cause.kind)
    assert.include(page.url(), `v=${target.version}`)
    await page.locator('[data-testid="cache-lane"]').scrollIntoViewIfNeeded()
    await page.screenshot({ path: join(artifacts, "viewer-cache-lane.png") })
    assert.deepStrictEqual(errors, [])
    await page.close()
  }, 300_000)

  it("compare: the recording and a tighter policy on one chart over model calls, their token lines and cache lanes, and the tighter one's lost items at the calls where they went", async () => {
    const printed = await ctxlogInProcess(["whatif", "--db", db, "--policy", tight, "--workers", "1", "--json", stream])
    assert.strictEqual(printed.code, 0, printed.stderr)
    const verdict: SweepReport.Verdict = JSON.parse(printed.stdout)
    const [result] = verdict.streams
    const candidate = result?.candidates[0]
    assert.isDefined(candidate)
    if (result === undefined || candidate === undefined) return
    assert.isAbove(candidate.lost.length, 0)

    const page = await open(`/?stream=${stream}`)
    await page.click('[data-testid="compare"] > summary')
    // The control offers the recording and the policies `serve --policy` was given.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="compare-policy-1"] option')].some(
        (option) => option instanceof HTMLOptionElement && option.value === "tight.json"
      )
    )
    await page.selectOption('[data-testid="compare-policy-0"]', "recorded")
    await page.selectOption('[data-testid="compare-policy-1"]', "tight.json")
    await page.click('[data-testid="compare-run"]')
    await page.waitForSelector('[data-testid="compare-result"]', { timeout: 240_000 })

    const totals = await page.locator('[data-testid="compare-total"]').evaluateAll((nodes) =>
      nodes.map((node) => ({
        policy: node.getAttribute("data-policy"),
        calls: Number(node.getAttribute("data-calls")),
        dollars: node.getAttribute("data-dollars"),
        lost: Number(node.getAttribute("data-lost"))
      }))
    )
    assert.deepStrictEqual(totals, [
      {
        policy: "recorded",
        calls: result.recorded.totals.calls,
        dollars: result.recorded.totals.dollars.toFixed(6),
        lost: 0
      },
      {
        policy: "tight.json",
        calls: candidate.totals.calls,
        dollars: candidate.totals.dollars.toFixed(6),
        lost: candidate.lost.length
      }
    ])
    // One line and one cache lane per policy, a point and a bar per model call.
    for (const [policy, calls] of [
      ["recorded", result.recorded.totals.calls],
      ["tight.json", candidate.totals.calls]
    ] as const) {
      assert.strictEqual(
        await page.locator(`[data-testid="compare-line"][data-policy="${policy}"]`).getAttribute("data-points"),
        String(calls)
      )
      assert.strictEqual(
        await page.locator(`[data-testid="compare-lane"][data-policy="${policy}"] [data-testid="compare-bar"]`).count(),
        calls
      )
    }
    // The lost items, each at the call where it went (as whatif --lost lists them).
    const marks = await page
      .locator('[data-testid="compare-lost"]')
      .evaluateAll((nodes) =>
        nodes.map(
          (node) =>
            `${node.getAttribute("data-policy")} ${node.getAttribute("data-call")} ${node.getAttribute("data-kind")} ${node.getAttribute("data-item")}`
        )
      )
    assert.deepStrictEqual(
      marks,
      candidate.lost.map((item) => `tight.json ${item.call} ${item.kind} ${item.item}`)
    )
    assert.strictEqual(
      await page.locator('[data-testid="compare-lost-list"]').getAttribute("data-items"),
      String(candidate.lost.length)
    )
    await page.locator('[data-testid="compare-chart"]').scrollIntoViewIfNeeded()
    await page.screenshot({ path: join(artifacts, "viewer-compare.png") })
    assert.deepStrictEqual(errors, [])
    await page.close()
  }, 300_000)

  it("compare names the policies it takes when asked for one it was not given, and needs two", async () => {
    const names = await (await fetch(new URL("/api/policies", url))).json()
    assert.deepStrictEqual(names, ["recorded", "tight.json"])
    const unknown = await fetch(new URL(`/api/streams/${stream}/compare?policy=recorded&policy=nope.json`, url))
    assert.strictEqual(unknown.status, 400)
    assert.include((await unknown.json()).error, 'no policy "nope.json" (of: recorded, tight.json)')
    const one = await fetch(new URL(`/api/streams/${stream}/compare?policy=recorded`, url))
    assert.strictEqual(one.status, 400)
  })
})
