// Timings of the pure planning steps and the template compactor over a real transcript, printed by
// `pnpm --filter @ctxlog/compaction bench`. Nothing here is asserted.
import { type Message, TokenCounter, Transcript, Window } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { bench, describe } from "vitest"
import { readTranscript } from "@ctxlog/core/transcripts"
import { CompressionPlan, TemplateCompactor, TieredCompaction, ToolOutputPruning } from "../src/index.js"

const counter = TokenCounter.gpt()
const inputs = Effect.runSync(Transcript.fromTranscriptJson(readTranscript("04-mini-swe-agent-django-11910.json")))
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
