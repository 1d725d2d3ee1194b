import { existsSync } from "node:fs"
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart
} from "@ai-sdk/provider"
import { generateText, type ModelMessage, stepCountIs, streamText, tool, wrapLanguageModel } from "ai"
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { ctxlogMiddleware, ctxlogPrepareStep } from "../src/aiSdk.js"
import { readBack, tempDb, usage } from "./support.js"

const stop = { unified: "stop" as const, raw: "stop" }
const toolCalls = { unified: "tool-calls" as const, raw: "tool_calls" }

/** A mock model answering from a script, one entry per call, and keeping every prompt it received. */
const scripted = (script: ReadonlyArray<LanguageModelV3GenerateResult>) => {
  const prompts: Array<LanguageModelV3CallOptions["prompt"]> = []
  let call = 0
  const model = new MockLanguageModelV3({
    provider: "mock.chat",
    modelId: "mock-1",
    doGenerate: async (options) => {
      prompts.push(options.prompt)
      const next = script[call++]
      if (next === undefined) throw new Error(`the script has ${script.length} answers; call ${call} has none`)
      return next
    }
  })
  return { model, prompts }
}

const text = (value: string, input = 100): LanguageModelV3GenerateResult => ({
  content: [{ type: "text", text: value }],
  finishReason: stop,
  usage: usage(input, 10),
  warnings: []
})

const callTool = (id: string, path: string): LanguageModelV3GenerateResult => ({
  content: [{ type: "tool-call", toolCallId: id, toolName: "read_file", input: JSON.stringify({ path }) }],
  finishReason: toolCalls,
  usage: usage(120, 20),
  warnings: []
})

const readFile = tool({
  description: "Read a file",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `contents of ${path}`
})

const roles = (prompt: LanguageModelV3CallOptions["prompt"]) => prompt.map((message) => message.role)

describe("ctxlogMiddleware", () => {
  it("records every call of a tool-using generateText turn, and every render rebuilds", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({ sqlite: filename, stream: "s1" })
    const { model, prompts } = scripted([callTool("c1", "a.ts"), text("a.ts exports one function."), text("Yes.")])
    const wrapped = wrapLanguageModel({ model, middleware })
    const first = await generateText({
      model: wrapped,
      system: "You are terse.",
      tools: { read_file: readFile },
      stopWhen: stepCountIs(3),
      prompt: "What is in a.ts?"
    })
    expect(first.text).toBe("a.ts exports one function.")
    // The model saw the rendered window: the system prompt, the user turn, then the tool round.
    expect(roles(prompts[0] ?? [])).toEqual(["system", "user"])
    expect(roles(prompts[1] ?? [])).toEqual(["system", "user", "assistant", "tool"])
    // A second generateText call with the whole conversation: only the new user message goes in.
    const messages: Array<ModelMessage> = [
      { role: "user", content: "What is in a.ts?" },
      ...first.response.messages,
      { role: "user", content: "Is that all?" }
    ]
    const second = await generateText({ model: wrapped, system: "You are terse.", messages })
    expect(second.text).toBe("Yes.")
    await middleware.close()

    const log = await readBack(filename, "s1")
    expect(log.window.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant"
    ])
    expect(log.window.system.map((message) => message.role)).toEqual(["system"])
    expect(log.count("PromptRendered")).toBe(3)
    expect(log.count("UsageReported")).toBe(3)
    expect(log.count("TurnCompleted")).toBe(2)
    expect(log.verification.renders).toBe(3)
    expect(log.verification.verified).toBe(3)
    expect(log.verification.failures).toEqual([])
    // The usage of each call carries the render's own estimate (window and tool schemas), which calibration reads.
    const rendered = log.events.flatMap((stored) => (stored.event._tag === "PromptRendered" ? [stored.event] : []))
    const reported = log.events.flatMap((stored) => (stored.event._tag === "UsageReported" ? [stored.event] : []))
    expect(reported[0]?.estimatedInputTokens).toBeGreaterThan(rendered[0]?.tokens.total ?? Number.POSITIVE_INFINITY)
    console.log("generate:", log.tags.join(" "))
    console.log("verifyAll:", JSON.stringify(log.verification))
  })

  it("collects a streamed answer and records it with its usage", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({ sqlite: filename, stream: "s2" })
    const parts: Array<LanguageModelV3StreamPart> = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "The build " },
      { type: "text-delta", id: "t1", delta: "passes." },
      { type: "text-end", id: "t1" },
      { type: "finish", finishReason: stop, usage: usage(80, 4) }
    ]
    const prompts: Array<LanguageModelV3CallOptions["prompt"]> = []
    const model = new MockLanguageModelV3({
      provider: "mock.chat",
      modelId: "mock-1",
      doStream: async (options) => {
        prompts.push(options.prompt)
        return { stream: convertArrayToReadableStream(parts) }
      }
    })
    const result = streamText({ model: wrapLanguageModel({ model, middleware }), prompt: "Does the build pass?" })
    expect(await result.text).toBe("The build passes.")
    await middleware.close()
    const log = await readBack(filename, "s2")
    const answer = log.window.history[1]
    expect(answer?.role).toBe("assistant")
    expect(answer?.parts).toEqual([{ type: "text", text: "The build passes." }])
    const reported = log.events.flatMap((stored) => (stored.event._tag === "UsageReported" ? [stored.event] : []))
    expect(reported.map((event) => event.inputTokens)).toEqual([80])
    expect(log.verification).toMatchObject({ renders: 1, verified: 1, failures: [] })
    console.log("stream:", log.tags.join(" "))
  })

  it("streams a tool round: the streamed tool call waits for its result and goes in with it", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({ sqlite: filename, stream: "s4" })
    const streams: Array<ReadonlyArray<LanguageModelV3StreamPart>> = [
      [
        { type: "stream-start", warnings: [] },
        { type: "reasoning-start", id: "r1" },
        { type: "reasoning-delta", id: "r1", delta: "I should read it." },
        { type: "reasoning-end", id: "r1" },
        { type: "tool-call", toolCallId: "c9", toolName: "read_file", input: '{"path":"c.ts"}' },
        { type: "finish", finishReason: toolCalls, usage: usage(90, 9) }
      ],
      [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t1" },
        { type: "text-delta", id: "t1", delta: "c.ts is short." },
        { type: "text-end", id: "t1" },
        { type: "finish", finishReason: stop, usage: usage(110, 5) }
      ]
    ]
    const prompts: Array<LanguageModelV3CallOptions["prompt"]> = []
    const model = new MockLanguageModelV3({
      provider: "mock.chat",
      modelId: "mock-1",
      doStream: async (options) => {
        prompts.push(options.prompt)
        return { stream: convertArrayToReadableStream([...(streams[prompts.length - 1] ?? [])]) }
      }
    })
    const result = streamText({
      model: wrapLanguageModel({ model, middleware }),
      tools: { read_file: readFile },
      stopWhen: stepCountIs(3),
      prompt: "What is in c.ts?"
    })
    expect(await result.text).toBe("c.ts is short.")
    expect(roles(prompts[1] ?? [])).toEqual(["user", "assistant", "tool"])
    await middleware.close()
    const log = await readBack(filename, "s4")
    expect(log.window.history.map((message) => message.parts.map((part) => part.type))).toEqual([
      ["text"],
      ["reasoning", "tool_call"],
      ["tool_result"],
      ["text"]
    ])
    const reported = log.events.flatMap((stored) => (stored.event._tag === "UsageReported" ? [stored.event] : []))
    expect(reported.map((event) => event.inputTokens)).toEqual([90, 110])
    expect(log.verification).toMatchObject({ renders: 2, verified: 2, failures: [] })
  })

  it("compacts a long conversation by the policy: the prompt the model gets is the compacted window", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({
      sqlite: filename,
      stream: "s3",
      policy: {
        builder: { provider: "default", model: "mock-1", contextWindow: 4_000, maxOutputTokens: 500 },
        compaction: { softThreshold: 0.5, hardThreshold: 0.6, proactiveThreshold: 0.55, targetRatio: 0.3 }
      }
    })
    const turns = 12
    const { model, prompts } = scripted(
      Array.from({ length: turns }, (_, index) => text(`Answer ${index}: ${"detail ".repeat(200)}`))
    )
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages: Array<ModelMessage> = []
    for (let index = 0; index < turns; index++) {
      messages.push({ role: "user", content: `Question ${index}: ${"context ".repeat(200)}` })
      const result = await generateText({ model: wrapped, messages })
      messages.push(...result.response.messages)
    }
    await middleware.close()
    const log = await readBack(filename, "s3")
    const compactions = log.count("Compacted") + log.count("HistoryTrimmed")
    expect(compactions).toBeGreaterThan(0)
    // The last prompt holds fewer messages than the conversation the caller passed.
    const last = prompts[prompts.length - 1] ?? []
    expect(last.length).toBeLessThan(messages.length - 1)
    expect(log.verification).toMatchObject({ renders: turns, verified: turns, failures: [] })
    console.log(
      `compaction: ${log.count("Compacted")} Compacted, ${log.count("HistoryTrimmed")} HistoryTrimmed; last prompt ${last.length} messages for a conversation of ${messages.length - 1}`
    )
  })
})

describe("ctxlogMiddleware with seams in the policy", () => {
  it("produces seams as the conversation grows, and every render still rebuilds", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({
      sqlite: filename,
      stream: "seams",
      policy: {
        builder: { provider: "default", model: "mock-1", contextWindow: 6_000, maxOutputTokens: 500 },
        seams: { level1: 0.3, level2: 0.5, level3: 0.7 }
      }
    })
    const turns = 10
    const { model } = scripted(
      Array.from({ length: turns }, (_, index) => text(`Answer ${index}: ${"detail ".repeat(150)}`))
    )
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages: Array<ModelMessage> = []
    for (let index = 0; index < turns; index++) {
      messages.push({ role: "user", content: `Question ${index}: ${"context ".repeat(150)}` })
      const result = await generateText({ model: wrapped, messages })
      messages.push(...result.response.messages)
    }
    await middleware.close()
    const log = await readBack(filename, "seams")
    expect(log.count("SeamProduced")).toBeGreaterThan(0)
    expect(log.verification).toMatchObject({ renders: turns, verified: turns, failures: [] })
    console.log(`seams: ${log.count("SeamProduced")} SeamProduced over ${turns} calls`)
  })
})

describe("ctxlogMiddleware across processes and on bad input", () => {
  it("a new middleware on a stream with history takes only the messages after the prompt's last answer", async () => {
    const filename = tempDb()
    const first = scripted([text("One.")])
    const firstMiddleware = ctxlogMiddleware({ sqlite: filename, stream: "r1" })
    const one = await generateText({
      model: wrapLanguageModel({ model: first.model, middleware: firstMiddleware }),
      prompt: "Count."
    })
    await firstMiddleware.close()
    // A second process: a fresh middleware, the whole conversation in the prompt.
    const second = scripted([text("Two.")])
    const secondMiddleware = ctxlogMiddleware({ sqlite: filename, stream: "r1" })
    await generateText({
      model: wrapLanguageModel({ model: second.model, middleware: secondMiddleware }),
      messages: [{ role: "user", content: "Count." }, ...one.response.messages, { role: "user", content: "Again." }]
    })
    await secondMiddleware.close()
    expect(roles(second.prompts[0] ?? [])).toEqual(["user", "assistant", "user"])
    const log = await readBack(filename, "r1")
    expect(log.window.history.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(log.verification).toMatchObject({ renders: 2, verified: 2, failures: [] })
  })

  it("refuses a prompt part ctxlog cannot hold with a typed error naming it, and writes nothing", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({ sqlite: filename, stream: "b1" })
    const { model, prompts } = scripted([text("never")])
    const failed = generateText({
      model: wrapLanguageModel({ model, middleware }),
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "fetch", input: {} }] },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "fetch",
              // A provider's file reference: ctxlog holds no such tool output item.
              output: { type: "content", value: [{ type: "file-id", fileId: "file_1" }] }
            }
          ]
        }
      ]
    })
    await expect(failed).rejects.toMatchObject({ _tag: "AdapterError", message: expect.stringContaining("prompt[2]") })
    await middleware.close()
    expect(prompts).toEqual([])
    // Refused before the log was opened: not even the database file was created.
    expect(existsSync(filename)).toBe(false)
  })

  it("keeps a provider option of any namespace and hands it back to the model in place (issue 35)", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({ sqlite: filename, stream: "b2" })
    const { model, prompts } = scripted([text("hello")])
    await generateText({
      model: wrapLanguageModel({ model, middleware }),
      messages: [{ role: "user", content: [{ type: "text", text: "hi", providerOptions: { acme: { secret: true } } }] }]
    })
    await middleware.close()
    expect(prompts[0]).toEqual([
      { role: "user", content: [{ type: "text", text: "hi", providerOptions: { acme: { secret: true } } }] }
    ])
    const log = await readBack(filename, "b2")
    expect(log.window.history[0]?.parts[0]).toEqual({
      type: "text",
      text: "hi",
      providerOptions: { acme: { secret: true } }
    })
    expect(log.verification).toMatchObject({ renders: 1, verified: 1, failures: [] })
  })
})

describe("ctxlogPrepareStep", () => {
  it("runs each step of a generateText agent through the turn module", async () => {
    const filename = tempDb()
    const steps = ctxlogPrepareStep({ sqlite: filename, stream: "p1" })
    const { model, prompts } = scripted([callTool("c1", "b.ts"), text("b.ts is empty.")])
    const result = await generateText({
      model,
      tools: { read_file: readFile },
      stopWhen: stepCountIs(3),
      prompt: "What is in b.ts?",
      prepareStep: steps.prepareStep,
      onStepFinish: steps.onStepFinish
    })
    expect(result.text).toBe("b.ts is empty.")
    expect(roles(prompts[1] ?? [])).toEqual(["user", "assistant", "tool"])
    await steps.close()
    const log = await readBack(filename, "p1")
    expect(log.window.history.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"])
    expect(log.count("UsageReported")).toBe(2)
    expect(log.count("TurnCompleted")).toBe(1)
    expect(log.verification).toMatchObject({ renders: 2, verified: 2, failures: [] })
    console.log("prepareStep:", log.tags.join(" "))
  })

  it("a follow-up whose messages hold only the last step's answer (ai 7's response.messages) still goes in", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({ sqlite: filename, stream: "last-step" })
    const { model, prompts } = scripted([callTool("c1", "a.ts"), text("a.ts exports one function."), text("Yes.")])
    const wrapped = wrapLanguageModel({ model, middleware })
    const first = await generateText({
      model: wrapped,
      tools: { read_file: readFile },
      stopWhen: stepCountIs(3),
      prompt: "What is in a.ts?"
    })
    // ai 7 gives the last step's messages only: the tool round is not in the caller's next prompt.
    const lastStep = first.response.messages.slice(-1)
    await generateText({
      model: wrapped,
      messages: [{ role: "user", content: "What is in a.ts?" }, ...lastStep, { role: "user", content: "Is that all?" }]
    })
    await middleware.close()
    // The model saw the new question after the whole first turn (from the log).
    expect(roles(prompts[2] ?? [])).toEqual(["user", "assistant", "tool", "assistant", "user"])
    const log = await readBack(filename, "last-step")
    expect(log.window.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant"
    ])
    expect(log.verification).toMatchObject({ renders: 3, verified: 3, failures: [] })
  })
})
