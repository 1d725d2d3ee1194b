// Timings of the pure planning steps and the template compactor over a real transcript, printed by
// `pnpm --filter @ctxlog/compaction bench`. Nothing here is asserted.
import { readFileSync } from "node:fs"
import { type Message, TokenCounter, Transcript, Window } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { bench, describe } from "vitest"
import { CompressionPlan, TemplateCompactor, TieredCompaction, ToolOutputPruning } from "../src/index.js"

const file = new URL("../../../../shared/transcripts/04-mini-swe-agent-django-11910.json", import.meta.url)
const counter = TokenCounter.gpt()
const inputs = Effect.runSync(Transcript.fromTranscriptJson(JSON.parse(readFileSync(file, "utf8"))))
const history: ReadonlyArray<Message.Message> = inputs.map((input, index) => ({
  id: `m${index}`,
  role: input.role,
  kind: "chat",
  parts: input.parts,
  tokens: counter.countMessage(input)
}))
const window = Window.replay(history.map((message, index) => ({ _tag: "MessageAppended", id: `e${index}`, message })))
const compactor = TemplateCompactor.make()

describe(`planning over ${history.length} messages (${window.tokens.total} tokens)`, () => {
  bench("compressionPlan", () => {
    CompressionPlan.compressionPlan(window, 8000)
  })
  bench("ToolOutputPruning.plan", () => {
    ToolOutputPruning.plan(window, { keepRecent: 3 }, counter.countMessage)
  })
  bench("TieredCompaction.decideSoft", () => {
    TieredCompaction.decideSoft(window, { keepRecent: 3 }, counter.countMessage)
  })
  bench("TemplateCompactor.compact (whole transcript)", () => {
    Effect.runSync(compactor.compact({ messages: history, previousSummary: null }))
  })
})
