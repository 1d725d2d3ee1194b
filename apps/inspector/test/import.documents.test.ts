// `ctxlog import` of the JSON-document formats: OpenAI Responses / Agents SDK items and AI SDK messages
// (ModelMessage[] and UIMessage[]). No real public session of these formats was found for the repository
// (fixtures/sessions/README.md says so): the inputs here are HAND-WRITTEN in each format's documented
// shape, not recordings. Each imports, renders and verifies; a damaged item fails naming its index and
// the session writes nothing.
import { RenderRecord } from "@ctxlog/providers"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import fc from "fast-check"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import * as Import from "../src/importers/Import.js"
import * as Session from "../src/importers/Session.js"

const responsesItems = [
  { role: "user", content: "What is the weather in Paris?" },
  {
    type: "reasoning",
    id: "rs_1",
    summary: [{ type: "summary_text", text: "Need the weather tool." }],
    encrypted_content: "gAAA"
  },
  { type: "function_call", id: "fc_1", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
  { type: "function_call_output", call_id: "call_1", output: '{"temp":20}' },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: "It is 20°C in Paris." }] },
  { role: "user", content: "And in Rome? Use the tool again." },
  // The Agents SDK's spelling of a call and its result.
  { type: "function_call", callId: "call_2", name: "get_weather", arguments: '{"city":"Rome"}' },
  {
    type: "function_call_result",
    callId: "call_2",
    name: "get_weather",
    status: "completed",
    output: { type: "text", text: '{"temp":24}' }
  },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: "24°C in Rome." }] }
]

const modelMessages = [
  { role: "system", content: "You are terse." },
  { role: "user", content: [{ type: "text", text: "Add 1 and 2." }] },
  { role: "assistant", content: [{ type: "tool-call", toolCallId: "t1", toolName: "add", input: { a: 1, b: 2 } }] },
  {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "t1", toolName: "add", output: { type: "json", value: 3 } }]
  },
  { role: "assistant", content: "3" }
]

const uiMessages = [
  { id: "u1", role: "user", parts: [{ type: "text", text: "Weather in Oslo?" }] },
  {
    id: "a1",
    role: "assistant",
    parts: [
      { type: "step-start" },
      {
        type: "tool-getWeather",
        toolCallId: "w1",
        state: "output-available",
        input: { city: "Oslo" },
        output: { temp: 3 }
      },
      { type: "step-start" },
      { type: "text", text: "3°C in Oslo." }
    ]
  }
]

const readAndRecord = (name: string, document: unknown) =>
  Effect.gen(function* () {
    const text = JSON.stringify(document)
    const format = Import.detect(text)
    if (format !== "openai-responses" && format !== "ai-sdk") return yield* Effect.dieMessage(`detected ${format}`)
    const read = yield* Import.readSessions(name, text, format, { provider: "openai", model: "gpt-4.1" })
    const [session] = read.sessions
    if (session === undefined) return yield* Effect.dieMessage("no session")
    const recorded = yield* Session.record(session)
    const check = RenderRecord.verifyAll(recorded.events.map((event, index) => ({ event, version: index + 1 })))
    return { format, recorded, check }
  })

describe("JSON-document formats (hand-written inputs)", () => {
  it.effect("Responses / Agents items: a call per output run, every render rebuilds", () =>
    Effect.gen(function* () {
      const { format, recorded, check } = yield* readAndRecord("items.json", responsesItems)
      assert.strictEqual(format, "openai-responses")
      // reasoning + call | answer | call | answer: four model calls.
      assert.strictEqual(recorded.calls, 4)
      assert.strictEqual(check.verified, 4)
      assert.deepStrictEqual(check.failures, [])
    })
  )

  it.effect("AI SDK ModelMessage[]: one call per assistant message", () =>
    Effect.gen(function* () {
      const { format, recorded, check } = yield* readAndRecord("model.json", { messages: modelMessages })
      assert.strictEqual(format, "ai-sdk")
      assert.strictEqual(recorded.calls, 2)
      assert.strictEqual(check.verified, 2)
    })
  )

  it.effect("AI SDK UIMessage[]: one call per step, the tool output after its step", () =>
    Effect.gen(function* () {
      const { recorded, check } = yield* readAndRecord("ui.json", uiMessages)
      assert.strictEqual(recorded.calls, 2)
      assert.strictEqual(check.verified, 2)
      const tags = recorded.events.map((event) => event._tag)
      const results = tags.indexOf("MessageAppended", tags.indexOf("PromptRendered") + 2)
      assert.isAbove(results, 0)
    })
  )

  it("fuzz: a damaged item or message fails naming its index, nothing recorded", async () => {
    const documents: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, string]> = [
      ["items.json", responsesItems, "item"],
      ["model.json", modelMessages, "message"],
      ["ui.json", uiMessages, "message"]
    ]
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...documents),
        fc.nat(),
        fc.constantFrom<unknown>(42, "text", null, [1], { role: 7 }),
        async ([name, items, label], pick, damage) => {
          await yieldToEventLoop()
          const index = pick % items.length
          const copy = items.map((item, at) => (at === index ? damage : item))
          const text = JSON.stringify(copy)
          const format = name === "items.json" ? "openai-responses" : "ai-sdk"
          const read = await Effect.runPromise(
            Effect.either(Import.readSessions(name, text, format, { provider: "openai", model: "m" }))
          )
          assert.isTrue(Either.isLeft(read), `${name} ${label} ${index} was accepted`)
          if (Either.isLeft(read)) assert.include(read.left.detail, `${label} ${index}`)
        }
      ),
      { numRuns: propertyRuns(30) }
    )
  })
})
