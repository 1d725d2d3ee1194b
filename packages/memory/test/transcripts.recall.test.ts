import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ContextService, Message, RecallSource, Transcript } from "@ctxlog/core"
import { freshStream, transcriptsDir } from "@ctxlog/testing"
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { RecallIndex, SqliteEventLog } from "../src/index.js"
import { postgres, withContext, withContextOnly } from "./support/stores.js"

// Real agent transcripts imported as conversations of one owner; a distinctive phrase from an early
// tool output must bring back that very tool message first.
const cases = [
  { file: "01-sweagent-enigma-ctf-i-got-id.json", index: 3, phrase: "<title>Perl Examples</title>" },
  {
    file: "04-mini-swe-agent-django-11910.json",
    index: 7,
    phrase: "from django.core.exceptions import FieldDoesNotExist"
  },
  { file: "06-openhands-codeact-ponyc-4588.json", index: 3, phrase: "CODE_OF_CONDUCT.md" },
  { file: "10-claude-code-agentcmd-navuser-initials.json", index: 11, phrase: "activeItem: NavItem | null" }
] as const

/** Words as the index sees them, space-separated and space-padded, to check a phrase is distinctive. */
const normalized = (text: string) => ` ${(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).join(" ")} `

const files = [
  "01-sweagent-enigma-ctf-i-got-id.json",
  "04-mini-swe-agent-django-11910.json",
  "06-openhands-codeact-ponyc-4588.json",
  "10-claude-code-agentcmd-navuser-initials.json"
]

const importAll = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  const index = yield* RecallIndex.RecallIndex
  const owner = freshStream("owner")
  const streams = new Map<string, string>()
  const texts = new Map<string, ReadonlyArray<string>>()
  for (const file of files) {
    const inputs = yield* Transcript.fromTranscriptJson(JSON.parse(readFileSync(join(transcriptsDir(), file), "utf8")))
    const stream = freshStream(file.slice(0, 2))
    yield* index.setOwner(stream, owner)
    // Keep the transcript position in the message id, to check which message came back.
    yield* ctx.appendMessages(
      stream,
      inputs.map((input, position) => ({ ...input, id: `${stream}:${position}` }))
    )
    streams.set(file, stream)
    texts.set(
      file,
      inputs.map((input) => normalized(Message.tokenTextOf(input)))
    )
  }
  return { owner, streams, texts }
})

const suite = Effect.gen(function* () {
  const index = yield* RecallIndex.RecallIndex
  const recall = yield* RecallSource.RecallSource
  const { owner, streams, texts } = yield* importAll
  for (const { file, index: position, phrase } of cases) {
    // The phrase is distinctive: its words occur in this order in that one message only.
    const holders = (texts.get(file) ?? []).flatMap((text, at) => (text.includes(normalized(phrase)) ? [at] : []))
    assert.deepStrictEqual(holders, [position], `"${phrase}" must be in message ${position} of ${file} only`)
    const stream = streams.get(file) ?? ""
    const expected = `${stream}:${position}`
    const hits = yield* index.search({ scope: RecallIndex.inStream(stream), query: phrase, limit: 5 })
    assert.strictEqual(hits[0]?.ref, expected, `${file}: "${phrase}" → ${hits.map((hit) => hit.ref).join(", ")}`)
    assert.strictEqual(hits[0]?.role, "tool")
    const recalled = yield* recall.recall({ kind: "recall", stream, query: phrase, budget: 8000 })
    assert.strictEqual(recalled[0]?.source?.messageId, expected)
    assert.include(Message.textOf(recalled[0]?.message ?? Message.user("")), "[earlier tool message]")
    // Across the owner's other conversations, the same phrase finds nothing of this one.
    const elsewhere = yield* index.search({ scope: RecallIndex.acrossOwner(owner, stream), query: phrase, limit: 50 })
    assert.isTrue(elsewhere.every((hit) => hit.stream !== stream))
  }
})

describe("recall over the shared transcripts", () => {
  layer(withContextOnly(SqliteEventLog.layer({ filename: ":memory:" })), { timeout: "300 seconds" })(
    "SQLite FTS5",
    (it) => {
      it.effect("a distinctive phrase from an early tool output returns that message first", () => suite, {
        timeout: 300_000
      })
    }
  )
  layer(withContext(postgres("transcripts")), { timeout: "300 seconds" })("PostgreSQL full-text", (it) => {
    it.effect("a distinctive phrase from an early tool output returns that message first", () => suite, {
      timeout: 300_000
    })
  })
})
