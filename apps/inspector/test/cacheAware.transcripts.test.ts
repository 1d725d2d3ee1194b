// Issue 37 item 6, the cache-aware option: over the repository's real transcripts (fixtures/transcripts and
// the Claude Code sessions of fixtures/sessions; provenance in their READMEs) at an 8k window, a policy with
// `compaction.preferCachedPrefix` keeps more of the cached prefix than the default policy, at equal or lower
// input cost, both priced by the cache model (`Pipeline.callStats`: Anthropic's table, the compactor's own
// calls included; one call a second, so no TTL expires). The figures it prints are in BENCHMARKS.md.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Message, Transcript } from "@ctxlog/core"
import type { Policy } from "@ctxlog/turn"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ClaudeCode from "../src/importers/ClaudeCode.js"
import * as Pipeline from "../src/Pipeline.js"
import type * as Queries from "../src/Queries.js"
import { transcripts } from "./support/cli.js"

const sessions = fileURLToPath(new URL("../../../fixtures/sessions/claude-code/", import.meta.url))
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const sources = Effect.gen(function* () {
  const out: Array<{ readonly name: string; readonly messages: ReadonlyArray<Message.MessageInput> }> = []
  for (const file of readdirSync(transcripts)
    .filter((name) => name.endsWith(".json"))
    .sort()) {
    const json: unknown = JSON.parse(readFileSync(join(transcripts, file), "utf8"))
    const raws = typeof json === "object" && json !== null && "messages" in json ? list(json.messages) : []
    out.push({ name: file, messages: yield* Transcript.fromOpenAIChat(raws) })
  }
  for (const file of readdirSync(sessions).sort()) {
    const read = yield* ClaudeCode.read(file, readFileSync(join(sessions, file), "utf8"))
    for (const session of read.sessions) {
      const messages = session.steps.flatMap((step): ReadonlyArray<Message.MessageInput> => {
        if (step._tag === "Messages") return step.messages
        if (step._tag === "Call") return [{ role: "assistant", parts: step.answer }]
        return []
      })
      out.push({ name: session.stream, messages })
    }
  }
  return out
})

const builder = { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 8192 } as const
const byDefault: Policy.Policy = { builder, compaction: {} }
const cacheAware: Policy.Policy = { builder, compaction: { preferCachedPrefix: true } }

interface Totals {
  readonly calls: number
  /** Prompt tokens of the renders (window tokens, tools apart). */
  readonly sent: number
  readonly read: number
  readonly cost: number
}

const run = (name: string, messages: ReadonlyArray<Message.MessageInput>, policy: Policy.Policy) =>
  Effect.gen(function* () {
    const events = yield* Pipeline.run(name, Pipeline.turnsOf(messages), () => policy)
    let call = 0
    const entries = events.map((event, index): Queries.Entry => {
      if (event._tag === "PromptRendered") call++
      return {
        version: index + 1,
        eventId: event.id,
        type: event._tag,
        schemaVersion: 0,
        recordedAt: call * 1000,
        event
      }
    })
    const stats = Pipeline.callStats(entries)
    return {
      calls: stats.length,
      sent: stats.reduce((sum, stat) => sum + stat.tokensSent, 0),
      read: stats.reduce((sum, stat) => sum + stat.cacheRead, 0),
      cost: stats.reduce((sum, stat) => sum + stat.cost, 0)
    } satisfies Totals
  })

describe("the cache-aware compaction option (issue 37 item 6)", () => {
  it.effect(
    "keeps more of the cached prefix than the default policy at equal or lower cost, over the transcripts at 8k",
    () =>
      Effect.gen(function* () {
        const lines: Array<string> = []
        const sum = { base: { read: 0, cost: 0, sent: 0 }, aware: { read: 0, cost: 0, sent: 0 } }
        for (const { name, messages } of yield* sources) {
          const base = yield* run(name, messages, byDefault)
          const aware = yield* run(name, messages, cacheAware)
          assert.strictEqual(aware.calls, base.calls, name)
          // On every source: no less read from the cache, no more spent.
          assert.isAtLeast(aware.read, base.read, name)
          assert.isAtMost(aware.cost, base.cost * (1 + 1e-9), name)
          sum.base.read += base.read
          sum.base.cost += base.cost
          sum.base.sent += base.sent
          sum.aware.sent += aware.sent
          sum.aware.read += aware.read
          sum.aware.cost += aware.cost
          lines.push(
            `${name}: ${base.calls} calls; cache read ${base.read} -> ${aware.read} tokens; ` +
              `input cost $${base.cost.toFixed(4)} -> $${aware.cost.toFixed(4)}`
          )
        }
        const share = (t: { read: number; sent: number }) => `${((100 * t.read) / t.sent).toFixed(1)}%`
        lines.push(
          `all: prompt tokens read from the cache ${share(sum.base)} -> ${share(sum.aware)}; cache read ${sum.base.read} -> ${sum.aware.read} tokens; input cost $${sum.base.cost.toFixed(4)} -> $${sum.aware.cost.toFixed(4)}`
        )
        console.log(lines.join("\n"))
        assert.isAbove(sum.aware.read, sum.base.read)
        assert.isAtMost(sum.aware.cost, sum.base.cost)
      }),
    600_000
  )
})
