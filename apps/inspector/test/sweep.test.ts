// Issue 38: policy sweeps (`ctxlog whatif --all / --import / --policy`), what a policy lost, the gate,
// and the example workflow's script, on the repository's transcripts and on SQLite logs made by
// `ctxlog import`. Replays run on worker threads where the CLI runs them.
import { execFile } from "node:child_process"
import { mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SweepPool from "../src/SweepPool.js"
import * as SweepReport from "../src/SweepReport.js"
import { bundledBin, ctxlogInProcess, tempDir, transcripts, importTranscript } from "./support/cli.js"

const temp = tempDir("ctxlog-sweep-")
afterAll(() => temp.cleanup())
const repo = fileURLToPath(new URL("../../../", import.meta.url))

const verdictOf = (result: { readonly code: number; readonly stdout: string; readonly stderr: string }) => {
  assert.strictEqual(result.code, 0, result.stderr)
  // The verdict is the JSON document `--json` prints; its shape is SweepReport.Verdict.
  const verdict: SweepReport.Verdict = JSON.parse(result.stdout)
  return verdict
}

const assertFaithful = (verdict: SweepReport.Verdict, streams: number) => {
  assert.strictEqual(verdict.failures.length, 0, JSON.stringify(verdict.failures))
  assert.strictEqual(verdict.streams.length, streams)
  for (const stream of verdict.streams) {
    const [replayed] = stream.candidates
    assert.isDefined(replayed)
    if (replayed === undefined) continue
    assert.isNull(replayed.error, stream.stream)
    assert.isAbove(stream.recorded.totals.calls, 0, stream.stream)
    assert.strictEqual(replayed.totals.calls, stream.recorded.totals.calls, stream.stream)
    assert.deepStrictEqual(replayed.lost, [], stream.stream)
    assert.strictEqual(replayed.totals.overflows, 0, stream.stream)
    assert.isAbove(stream.recorded.totals.dollars, 0, stream.stream)
    assert.isAtMost(
      Math.abs(replayed.totals.dollars - stream.recorded.totals.dollars),
      stream.recorded.totals.dollars * 0.01,
      `${stream.stream}: dollars within 1% of the recorded`
    )
  }
}

describe("ctxlog whatif as a sweep", () => {
  const files = readdirSync(transcripts).filter((name) => name.endsWith(".json"))

  it("the recorded policy replayed on every fixture transcript: 0 lost, 0 overflows, dollars within 1%, on 2 worker threads", async () => {
    assert.isAtLeast(files.length, 4)
    const verdict = verdictOf(
      await ctxlogInProcess([
        "whatif",
        "--import",
        transcripts,
        "--import-budget",
        "16000",
        "--workers",
        "2",
        "--fail-on",
        "lost>0",
        "--fail-on",
        "overflow>0",
        "--json"
      ])
    )
    assert.strictEqual(verdict.workers, 2)
    assertFaithful(verdict, files.length)
    assert.deepStrictEqual(
      verdict.gate.filter((result) => result.failed),
      []
    )
    // A sweep counts what a whole-corpus verdict needs.
    const [policy] = verdict.policies
    assert.strictEqual(policy?.totals.calls, verdict.recorded.totals.calls)
    assert.isAbove(verdict.recorded.totals.cacheRead, 0)
    assert.isAbove(
      Object.values(verdict.recorded.totals.compactions).reduce((a, b) => a + b, 0),
      0
    )
    // The compactor's own calls are priced (uncached input: the messages each summary replaced), in the
    // dollars, the same for the recording and its faithful replay.
    assert.isAbove(verdict.recorded.totals.compactor.calls, 0)
    assert.isAbove(verdict.recorded.totals.compactor.dollars, 0)
    assert.isBelow(verdict.recorded.totals.compactor.dollars, verdict.recorded.totals.dollars)
    assert.strictEqual(policy?.totals.compactor.calls, verdict.recorded.totals.compactor.calls)
  }, 600_000)

  it("--db repeated and --all: every stream of two SQLite logs made by ctxlog import, read and verified in the workers", async () => {
    const dbs = ["a.db", "b.db"].map((name) => join(temp.dir, name))
    for (const [index, db] of dbs.entries()) {
      await importTranscript({
        db,
        budget: 16_000,
        stream: `session-${index}`,
        file: "01-sweagent-enigma-ctf-i-got-id.json"
      })
    }
    const verdict = verdictOf(
      await ctxlogInProcess(["whatif", "--db", dbs[0] ?? "", "--db", dbs[1] ?? "", "--all", "--json"])
    )
    assertFaithful(verdict, 2)
    assert.deepStrictEqual(
      verdict.streams.map((stream) => stream.stream),
      ["session-0", "session-1"]
    )
    // --match selects; a pattern that matches nothing is an error naming it.
    const one = verdictOf(await ctxlogInProcess(["whatif", "--db", dbs[0] ?? "", "--match", "session-*", "--json"]))
    assert.strictEqual(one.streams.length, 1)
    const none = await ctxlogInProcess(["whatif", "--db", dbs[0] ?? "", "--match", "nothing*"])
    assert.strictEqual(none.code, 1)
    assert.include(none.stderr, "no stream matched --match nothing*")
  }, 600_000)

  it("a policy that drops a needed path (tiny window, hard compaction, a compactor that omits paths) lists it at the call that needed it; a policy that keeps it lists nothing", async () => {
    const path = "services/billing/config/ledger_rules.yaml"
    const filler = (n: number) =>
      Array.from({ length: 60 }, (_, i) => `line ${n}-${i}: nothing to see here, just a long listing`).join("\n")
    const messages: Array<unknown> = [
      { role: "system", content: "You are a careful agent." },
      { role: "user", content: "Find the ledger rules file and tell me where it is at the end." },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_find", type: "function", function: { name: "find", arguments: '{"pattern":"ledger"}' } }
        ]
      },
      { role: "tool", tool_call_id: "call_find", content: `Found: ${path}` }
    ]
    for (let i = 0; i < 8; i++) {
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [{ id: `call_ls_${i}`, type: "function", function: { name: "ls", arguments: `{"dir":"dir${i}"}` } }]
      })
      messages.push({ role: "tool", tool_call_id: `call_ls_${i}`, content: filler(i) })
    }
    messages.push({ role: "assistant", content: `The ledger rules are in ${path}.` })
    const dir = join(temp.dir, "needed")
    mkdirSync(dir)
    const file = join(dir, "needed.json")
    writeFileSync(file, JSON.stringify({ messages }))
    const dropping = {
      builder: { provider: "openai" as const, model: "gpt-4.1", contextWindow: 2048, maxOutputTokens: 256 },
      compaction: { softThreshold: 0.4, hardThreshold: 0.5, targetRatio: 0.3 },
      compactor: { kind: "template" as const, maxBytes: 64 }
    }
    const keeping = {
      builder: { provider: "openai" as const, model: "gpt-4.1", contextWindow: 64_000 },
      compaction: {}
    }
    const outcome = await Effect.runPromise(
      SweepPool.runJob({ _tag: "import", file, provider: "openai", model: "gpt-4.1", budget: 64_000 }, [
        { name: "drop", settings: dropping },
        { name: "keep", settings: keeping }
      ])
    )
    assert.isTrue(outcome.ok)
    if (!outcome.ok) return
    const [result] = outcome.results
    const [drop, keep] = result?.candidates ?? []
    assert.isNull(drop?.error ?? null)
    // The recording kept everything: 10 model calls, the last one answers with the path.
    assert.strictEqual(result?.recorded.totals.calls, 10)
    const missing = drop?.lost.find((item) => item.kind === "identifier" && item.item === path)
    assert.isDefined(missing, JSON.stringify(drop?.lost))
    assert.strictEqual(missing?.stream, "needed")
    assert.strictEqual(missing?.call, "10.1")
    assert.strictEqual(missing?.callIndex, 9)
    // The what-if event that took it out of the window: the compaction that folded the tool result.
    assert.strictEqual(missing?.removedBy?.type, "Compacted")
    assert.isAbove(drop?.totals.compactions.proactive ?? drop?.totals.compactions.hard ?? 0, 0)
    // Its compactions are summaries: each one a compactor call, priced into its dollars.
    assert.isAbove(drop?.totals.compactor.calls ?? 0, 0)
    assert.isAbove(drop?.totals.compactor.tokens ?? 0, 0)
    assert.isAbove(drop?.totals.dollars ?? 0, drop?.totals.compactor.dollars ?? 0)
    assert.deepStrictEqual(keep?.lost, [])
    assert.strictEqual(keep?.totals.lost.identifiers, 0)

    // The same through the CLI: --lost names it, and the gate fails on it with the reason.
    const dropFile = join(temp.dir, "drop.json")
    writeFileSync(dropFile, JSON.stringify(dropping))
    const gated = await ctxlogInProcess([
      "whatif",
      "--import",
      dir,
      "--import-budget",
      "64000",
      "--policy",
      dropFile,
      "--lost",
      "--fail-on",
      "lost>0"
    ])
    assert.strictEqual(gated.code, 1)
    assert.include(gated.stdout, `needed  call 10.1  identifier  ${JSON.stringify(path)}  removed by Compacted @`)
    assert.include(gated.stderr, "gate failed: drop.json: lost")
    assert.include(gated.stderr, "fails lost>0")
  }, 600_000)

  it("--import takes every format `ctxlog import` reads: the Claude Code and Codex fixture sessions, each a stream at its recorded times; the recorded policy replayed loses nothing and overflows nothing", async () => {
    const sessions = join(repo, "fixtures", "sessions")
    const verdict = verdictOf(await ctxlogInProcess(["whatif", "--import", sessions, "--workers", "2", "--json"]))
    assert.strictEqual(verdict.failures.length, 0, JSON.stringify(verdict.failures))
    const names = verdict.streams.map((stream) => stream.stream)
    assert.isTrue(
      names.some((name) => name.startsWith("full-session-")),
      names.join()
    )
    assert.isTrue(
      names.some((name) => name.startsWith("rollout-")),
      names.join()
    )
    for (const stream of verdict.streams) {
      const [replayed] = stream.candidates
      assert.isNull(replayed?.error ?? null, stream.stream)
      assert.isAbove(stream.recorded.totals.calls, 0, stream.stream)
      assert.strictEqual(replayed?.totals.calls, stream.recorded.totals.calls, stream.stream)
      assert.deepStrictEqual(replayed?.lost, [], stream.stream)
      assert.strictEqual(replayed?.totals.overflows, 0, stream.stream)
      // Imported sessions carry their times: the cache model reads and writes (a TTL needs them).
      assert.isAbove(stream.recorded.totals.cacheRead, 0, stream.stream)
      if (stream.stream.startsWith("rollout-")) {
        // Codex: automatic prefix caching, the replayed renders priced as recorded.
        assert.isAtMost(
          Math.abs((replayed?.totals.dollars ?? 0) - stream.recorded.totals.dollars),
          stream.recorded.totals.dollars * 0.01,
          stream.stream
        )
      }
    }
  }, 600_000)

  it("--fail-on takes cost>+N%, lost>N, overflow>N, failed>N; anything else is a usage error naming it", async () => {
    assert.deepStrictEqual(SweepReport.parseCondition("cost>+2%"), {
      text: "cost>+2%",
      metric: "cost",
      op: ">",
      value: 2
    })
    assert.deepStrictEqual(SweepReport.parseCondition("overflow>=1"), {
      text: "overflow>=1",
      metric: "overflow",
      op: ">=",
      value: 1
    })
    assert.instanceOf(SweepReport.parseCondition("cost>2"), SweepReport.BadCondition)
    assert.instanceOf(SweepReport.parseCondition("lost>1%"), SweepReport.BadCondition)
    const bad = await ctxlogInProcess(["whatif", "--import", transcripts, "--fail-on", "price<3"])
    assert.strictEqual(bad.code, 1)
    assert.include(bad.stderr, '--fail-on "price<3": expected <metric><op><value>')
    const missing = await ctxlogInProcess(["whatif", "--import", transcripts, "--policy", join(temp.dir, "nope.json")])
    assert.strictEqual(missing.code, 1)
    assert.include(missing.stderr, "nope.json")
  })

  it("the example workflow's script: the candidate passes the gate, a policy that costs more fails it with the reason, markdown out", async () => {
    const run = (policy: string, out: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          join(repo, "examples/policy-sweep/sweep.sh"),
          [join(repo, "examples/policy-sweep/policies", policy)],
          {
            cwd: repo,
            env: {
              ...process.env,
              CTXLOG: `${process.execPath} ${bundledBin}`,
              MATCH: "01-*",
              OUT: join(temp.dir, out),
              WORKERS: "1",
              NO_COLOR: "1"
            },
            maxBuffer: 16 * 1024 * 1024
          },
          (error, stdout, stderr) =>
            resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
        )
      })
    const pass = await run("candidate.json", "pass.md")
    assert.strictEqual(pass.code, 0, pass.stderr)
    assert.include(pass.stdout, "### ctxlog policy sweep")
    assert.include(pass.stdout, "| candidate.json |")
    assert.include(pass.stdout, "**Gate: passed.**")
    const fail = await run("wider-window.json", "fail.md")
    assert.notStrictEqual(fail.code, 0)
    assert.include(fail.stdout, "**Gate: failed**")
    assert.include(fail.stderr, "wider-window.json: cost +")
    assert.include(fail.stderr, "fails cost>+2%")
  }, 600_000)
})
