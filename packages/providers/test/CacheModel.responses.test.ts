// The cache model on OpenAI Responses renders (issue 37, ADR 0141): the stateless reasoning a Codex rollout
// holds (encrypted, no item id) is rendered, and counted by its ciphertext's size at the table's rate; the
// server's view of an item is counted (its strings, not the JSON that carries them); reasoning of an
// earlier turn is dropped by the server, which ends the prefix there and is named; the previous call's
// output is read back with its prompt.
import { ContextService, EventLog, Ids, Message, TokenCounter } from "@ctxlog/core"
import { assert, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { CacheModel, CacheTable, CtxBuilder, OpenAICtx, RenderRecord, SentTokens } from "../src/index.js"

const live = ContextService.layerMemory({ ids: Ids.layerSequential("r") })

const stateless: CtxBuilder.ProviderConfig = {
  provider: "openai",
  api: "responses",
  model: "gpt-5-codex",
  contextWindow: 200_000,
  statelessReasoning: true
}
// A Fernet token as Codex stores it (`gAAAAA…`): 4,000 base64url characters, 3,000 bytes.
const encrypted = `gAAAAABo${"Q".repeat(3992)}`
const longSystem = Array.from({ length: 1500 }, (_, index) => `rule${index}`).join(" ")
const o200k = TokenCounter.gpt("o200k_base").count

const record = (stream: string, config: CtxBuilder.ProviderConfig) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const built = CtxBuilder.forProvider(config).build(yield* ctx.load(stream), {})
    if (Either.isLeft(built)) return yield* Effect.die(built.left)
    const target = { provider: "openai", model: config.model }
    yield* RenderRecord.recordRender(stream, built.right, target, { config })
    yield* RenderRecord.recordUsage(
      stream,
      { inputTokens: built.right.stats.total, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      built.right.stats.total,
      target
    )
    return built.right.request as OpenAICtx.ResponsesRequest
  })

/** A model answer: stateless reasoning (no item id), then a tool call; and its result. */
const answer = (stream: string, index: number) =>
  Effect.flatMap(ContextService.ContextService, (ctx) =>
    ctx.appendMessages(stream, [
      {
        role: "assistant",
        parts: [
          Message.reasoning(`**Step ${index}**`, { encryptedContent: encrypted }),
          Message.toolCall(`call_${index}`, "shell", { command: ["cat", `f${index}.ts`] })
        ]
      },
      Message.tool(`call_${index}`, `{"output":"line one\\n\\"quoted\\"\\nline ${index}","metadata":{"exit_code":0}}`)
    ])
  )

const timed = (stream: string, step: number) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    let render = -1
    return envelopes.map((envelope): CacheModel.TimedEvent => {
      if (envelope.event._tag === "PromptRendered") render++
      return { version: envelope.version, recordedAt: Math.max(0, render) * step, event: envelope.event }
    })
  })

layer(live)("CacheModel on Responses renders", (it) => {
  it.effect("stateless reasoning is sent back only when the config says so, and counted as sent", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("s", [Message.user("look at f1.ts")])
      yield* answer("s", 1)
      const window = yield* ctx.load("s")
      const types = (config: CtxBuilder.ProviderConfig) => {
        const built = CtxBuilder.forProvider(config).build(window, {})
        if (Either.isLeft(built)) throw built.left
        return (built.right.request as OpenAICtx.ResponsesRequest).input
      }
      const sent = types(stateless)
      const reasoning = sent.find((item) => item.type === "reasoning")
      assert.deepStrictEqual(reasoning, {
        type: "reasoning",
        summary: [{ type: "summary_text", text: "**Step 1**" }],
        encrypted_content: encrypted
      })
      // Without the option (and so for every render recorded before it), reasoning without an id stays out.
      const { statelessReasoning: _omitted, ...plain } = stateless as OpenAICtx.Config & { provider: "openai" }
      assert.isUndefined(types(plain).find((item) => item.type === "reasoning"))
      const part = Message.reasoning("x", { encryptedContent: encrypted })
      assert.isTrue(SentTokens.sendsReasoning("item-or-encrypted", part))
      assert.isFalse(SentTokens.sendsReasoning("item", part))
      // What the builder does not send is not counted as sent: less is unsent with the option.
      assert.isBelow(
        OpenAICtx.makeResponses(stateless).unsentTokens(window),
        OpenAICtx.makeResponses(plain).unsentTokens(window)
      )
    })
  )

  it.effect(
    "counts an item as the server reads it, and encrypted reasoning by its ciphertext at the table's rate",
    () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt("c", longSystem)
        yield* ctx.appendMessages("c", [Message.user("look at f1.ts")])
        yield* answer("c", 1)
        const request = yield* record("c", stateless)
        const report = CacheModel.predict(yield* timed("c", 1000))
        const resolved = CacheTable.resolve("openai", "gpt-5-codex")
        const rate = resolved.encryptedReasoning
        // A message is framed by 3 tokens, every other item by the table's (9 for OpenAI, measured on the
        // Codex rollouts; ADR 0172).
        const framing = resolved.itemFramingTokens
        assert.strictEqual(framing, 9)
        if (rate === undefined) return assert.fail("the table gives OpenAI an encrypted-reasoning rate")
        const expected = request.input.reduce((sum, item) => {
          switch (item.type) {
            case "message":
              return sum + 3 + o200k(`${item.role}\n${typeof item.content === "string" ? item.content : ""}`)
            case "reasoning":
              return (
                sum +
                framing +
                o200k(item.summary.map((piece) => piece.text).join("\n")) +
                Math.round((3000 - rate.overheadBytes) / rate.bytesPerToken)
              )
            case "function_call":
              return sum + framing + o200k(`${item.name}\n${item.arguments}`)
            case "function_call_output":
              return sum + framing + o200k(typeof item.output === "string" ? item.output : "")
            default:
              return assert.fail(`an item the test does not expect: ${JSON.stringify(item)}`)
          }
        }, 0)
        assert.strictEqual(report.calls[0]?.predicted.promptTokens, expected)
        // The JSON of the items (escaped again, with their keys and call ids) would count more.
        const asJson = request.input.reduce((sum, item) => sum + o200k(JSON.stringify(item)), 0)
        assert.isAbove(asJson, expected)
      })
  )

  it.effect("reads the previous call's output with its prompt; a new user turn drops earlier reasoning, named", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("t", longSystem)
      yield* ctx.appendMessages("t", [Message.user("look at f1.ts")])
      yield* record("t", stateless)
      yield* answer("t", 1)
      yield* record("t", stateless)
      yield* answer("t", 2)
      yield* record("t", stateless)
      yield* ctx.appendMessages("t", [Message.assistant("done"), Message.user("and f3.ts?")])
      yield* record("t", stateless)
      const [first, second, third, fourth] = CacheModel.predict(yield* timed("t", 2000)).calls
      if (first === undefined || second === undefined || third === undefined || fourth === undefined) {
        return assert.fail("four calls expected")
      }
      // Call 2 reads past call 1's prompt: into the reasoning and the tool call call 1 generated.
      assert.isAbove(second.predicted.cacheRead, first.predicted.promptTokens)
      assert.isAbove(third.predicted.cacheRead, second.predicted.promptTokens)
      // After the new user message the two reasoning items read as nothing: the prompt shrinks, and the
      // prefix ends where the first of them stood (inside call 1's prompt and output).
      assert.isBelow(fourth.predicted.promptTokens, third.predicted.promptTokens)
      assert.isAtMost(fourth.predicted.cacheRead, second.predicted.cacheRead)
      assert.strictEqual(fourth.cause?.kind, "reasoning-dropped")
      // input[0] the system prompt (developer), input[1] the first user message, input[2] the first reasoning.
      assert.strictEqual(fourth.cause?.divergedAt, "input[2]")
    })
  )
})
