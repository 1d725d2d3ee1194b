// The CLI as a child process against a real SQLite file made by `import --format openai-chat`.
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ctxlog as child, ctxlogInProcess, json, tempDir, importTranscript } from "./support/cli.js"

const transcript = "01-sweagent-enigma-ctf-i-got-id.json"
const stream = "ctf"
const temp = tempDir("ctxlog-cli-")
const db = join(temp.dir, "log.db")

// The import and one command run as child processes; the other commands run in-process.
const ctxlog = (args: ReadonlyArray<string>, _cwd: string) => ctxlogInProcess(args)

const record = (value: unknown): Record<string, unknown> => {
  assert.isTrue(typeof value === "object" && value !== null && !Array.isArray(value), "expected an object")
  return Object.fromEntries(Object.entries(value ?? {}))
}
const list = (value: unknown): ReadonlyArray<unknown> => {
  assert.isTrue(Array.isArray(value), "expected an array")
  return Array.isArray(value) ? value : []
}

beforeAll(async () => {
  await importTranscript({ db, stream, budget: 6000, file: transcript, run: (args) => child(args, temp.dir) })
}, 120_000)
afterAll(() => temp.cleanup())

describe("ctxlog on an imported transcript", () => {
  it("streams lists the conversation with its turns, renders and compactions", async () => {
    const [summary] = list(json(await ctxlog(["streams", "--db", db, "--json"], temp.dir)))
    const row = record(summary)
    assert.strictEqual(row.stream, stream)
    // 21 assistant turns in the transcript, one render each.
    assert.strictEqual(row.turns, 21)
    assert.strictEqual(row.renders, 21)
    assert.isAbove(Number(row.compactions), 0)
  })

  it("verify --renders: every event decodes, the chain holds, every render rebuilds to its hash", async () => {
    const result = record(json(await ctxlog(["verify", "--db", db, "--renders", "--json"], temp.dir)))
    assert.strictEqual(result.ok, true)
    const [check] = list(result.streams)
    assert.strictEqual(record(check).rendersVerified, 21)
    assert.deepStrictEqual(record(check).problems, [])
  })

  it("render --turn K prints the request and says verified", async () => {
    const result = await child(["render", "--db", db, "--turn", "5", stream], temp.dir)
    assert.strictEqual(result.code, 0, result.stderr)
    const [title, status, , body] = result.stdout.split("\n")
    assert.match(title ?? "", /turn 5\) for openai\/gpt-4\.1/)
    assert.match(status ?? "", /^verified: sha256 [0-9a-f]{64}$/)
    assert.strictEqual(record(JSON.parse(body ?? "")).model, "gpt-4.1")
  })

  it("window --at N: partitions sum to the window's tokens; usage is against the recorded budget", async () => {
    const result = record(json(await ctxlog(["window", "--db", db, "--at", "30", stream, "--json"], temp.dir)))
    const window = record(result.window)
    const usage = record(result.usage)
    assert.strictEqual(window.version, 30)
    assert.strictEqual(usage.budget, 6000)
    const tokens = record(window.tokens)
    const history = list(window.history).reduce<number>((total, row) => total + Number(record(row).tokens), 0)
    assert.strictEqual(history, tokens.history)
    const lines = list(usage.lines).map(record)
    assert.strictEqual(
      lines.reduce((total, line) => total + Number(line.tokens), 0),
      usage.used
    )
  })

  it("window at the head folds from the snapshot the import saved; an earlier version replays from the start", async () => {
    const atHead = record(json(await ctxlog(["window", "--db", db, stream, "--json"], temp.dir)))
    const head = Number(record(atHead.window).version)
    assert.strictEqual(atHead.foldedFrom, head)
    const earlier = record(json(await ctxlog(["window", "--db", db, "--at", "10", stream, "--json"], temp.dir)))
    assert.strictEqual(earlier.foldedFrom, 0)
    const [check] = list(record(json(await ctxlog(["verify", "--db", db, "--json"], temp.dir))).streams)
    assert.strictEqual(record(check).snapshot, head)
  })

  it("import --format openai-chat keeps reasoning_content visible as a marked text part", async () => {
    const file = join(temp.dir, "reasoning.json")
    writeFileSync(
      file,
      JSON.stringify({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "2+2?" },
          { role: "assistant", content: "4", reasoning_content: "Adding two and two gives four." },
          { role: "user", content: "And 3+3?" },
          { role: "assistant", content: "6" }
        ]
      })
    )
    const target = join(temp.dir, "reasoning.db")
    assert.strictEqual((await ctxlog(["import", "--format", "openai-chat", "--db", target, file], temp.dir)).code, 0)
    const window = record(json(await ctxlog(["window", "--db", target, "reasoning", "--json"], temp.dir))).window
    const answered = record(list(record(window).history).at(-3))
    assert.strictEqual(answered.role, "assistant")
    assert.match(String(answered.preview), /^\[reasoning_content\] Adding two and two gives four\. 4$/)
    // A render is the request of a model call: the next call's render carries the first answer.
    const render = await ctxlog(["render", "--db", target, "reasoning"], temp.dir)
    assert.include(render.stdout, "Adding two and two gives four.")
  })

  it("blame names the pruning event of a pruned tool output; diff lists what changed between versions", async () => {
    const blame = record(json(await ctxlog(["blame", "--db", db, stream, "--json"], temp.dir)))
    const messages = list(blame.messages).map(record)
    const changed = messages.filter((row) => row.lastChangedBy !== null).map((row) => record(row.lastChangedBy))
    assert.isAbove(changed.length + list(blame.removed).length, 0)
    for (const touch of changed) assert.include(["pruned", "summarized (deferred)", "pinned", "unpinned"], touch.action)
    const head = Number(blame.version)
    const diff = record(json(await ctxlog(["diff", "--db", db, stream, "1", String(head), "--json"], temp.dir)))
    assert.strictEqual(diff.from, 1)
    assert.strictEqual(diff.to, head)
    assert.strictEqual(list(diff.added).length, messages.length - 1)
  })

  it("events --type filters; export then import into a new file round-trips and verifies", async () => {
    const renders = list(
      json(await ctxlog(["events", "--db", db, stream, "--type", "PromptRendered", "--json"], temp.dir))
    )
    assert.strictEqual(renders.length, 21)
    const exported = await ctxlog(["export", "--db", db, stream], temp.dir)
    assert.strictEqual(exported.code, 0, exported.stderr)
    const file = join(temp.dir, "ctf.jsonl")
    writeFileSync(file, exported.stdout)
    const header = record(JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? ""))
    assert.deepStrictEqual(header.format, "ctxlog.events")
    const copy = join(temp.dir, "copy.db")
    const imported = await child(["import", "--db", copy, file], temp.dir)
    assert.strictEqual(imported.code, 0, imported.stderr)
    assert.isTrue(existsSync(copy))
    const verified = record(json(await ctxlog(["verify", "--db", copy, "--renders", "--json"], temp.dir)))
    assert.strictEqual(verified.ok, true)
    const original = record(json(await ctxlog(["window", "--db", db, stream, "--json"], temp.dir))).window
    const copied = record(json(await ctxlog(["window", "--db", copy, stream, "--json"], temp.dir))).window
    assert.deepStrictEqual(copied, original)
  })

  it("whatif replays the recorded policy to the recorded totals, and another policy over the same model calls", async () => {
    const same = record(json(await ctxlog(["whatif", "--db", db, stream, "--json"], temp.dir)))
    assert.strictEqual(same.equalPolicies, true)
    const sameTotals = record(same.totals)
    const recordedSent = Number(record(sameTotals.recorded).tokensSent)
    assert.isAtMost(Math.abs(Number(record(sameTotals.whatif).tokensSent) - recordedSent), recordedSent * 0.01)
    assert.strictEqual(record(sameTotals.whatif).calls, record(sameTotals.recorded).calls)

    const config = join(temp.dir, "whatif.json")
    writeFileSync(
      config,
      JSON.stringify({
        builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 4000 },
        compaction: {}
      })
    )
    const result = record(json(await ctxlog(["whatif", "--db", db, stream, "--config", config, "--json"], temp.dir)))
    const calls = list(result.calls).map(record)
    const totals = record(result.totals)
    // Like with like: the replay makes exactly the recorded model calls.
    assert.strictEqual(calls.length, Number(record(totals.recorded).calls))
    assert.strictEqual(record(totals.whatif).calls, record(totals.recorded).calls)
    assert.strictEqual(result.equalPolicies, false)
    // A smaller window sends fewer tokens.
    assert.isBelow(Number(record(totals.whatif).tokensSent), recordedSent)
    assert.isAbove(Number(record(totals.whatif).compactions), 0)
  })
})
