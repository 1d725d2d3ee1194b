// Caller cache hints through the AI SDK integrations (issue 23): a caller's
// `providerOptions.anthropic.cacheControl` on a message or a part becomes a recorded render option
// (`PromptRendered` v5 `render.cacheHints`, by window message), the `ai-sdk` format places it on the
// messages it names, the model receives that prompt, and `ctxlog render` rebuilds it with them.
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider"
import { Window, type WindowEvent } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import { generateText, type ModelMessage, stepCountIs, wrapLanguageModel } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { ctxlogMiddleware, ctxlogPrepareStep } from "../src/aiSdk.js"
import { type ReadBack, readBack, tempDb, usage } from "./support.js"

const answer = (value: string): LanguageModelV3GenerateResult => ({
  content: [{ type: "text", text: value }],
  finishReason: { unified: "stop", raw: "end_turn" },
  usage: usage(100, 10),
  warnings: []
})

const anthropicModel = (answers: ReadonlyArray<string>) => {
  const prompts: Array<LanguageModelV3CallOptions["prompt"]> = []
  let call = 0
  const model = new MockLanguageModelV3({
    provider: "anthropic.messages",
    modelId: "claude-sonnet-4-5",
    doGenerate: async (options) => {
      prompts.push(options.prompt)
      return answer(answers[call++] ?? "done")
    }
  })
  return { model, prompts }
}

const ephemeral = { anthropic: { cacheControl: { type: "ephemeral" } } }
const hour = { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } }

/** The recorded renders, each rebuilt from the log (what `ctxlog render` prints) with its hints. */
const rebuiltRenders = (log: ReadBack) => {
  const blobs = RenderRecord.collectBlobs(log.events.map((stored) => stored.event))
  return log.events.flatMap((stored, index) => {
    if (stored.event._tag !== "PromptRendered") return []
    const before = Window.replay(log.events.slice(0, index).map((entry) => entry.event))
    const rebuilt = RenderRecord.rebuild(before, stored.event, stored.version, blobs)
    if (Either.isLeft(rebuilt)) throw new Error(rebuilt.left.message)
    return [{ event: stored.event, before, request: rebuilt.right.request as AiSdkShape }]
  })
}

/** A recorded render of the integrations: the AI SDK prompt (the `ai-sdk` format). */
interface AiSdkShape {
  readonly format: "ai-sdk"
  readonly prompt: ReadonlyArray<{
    readonly role: string
    readonly content: string | ReadonlyArray<{ readonly type: string; readonly text?: string }>
    readonly providerOptions?: { readonly anthropic?: { readonly cacheControl?: unknown } }
  }>
}

/** Where a recorded prompt carries a cache breakpoint, by message and its text. */
const markersOf = (request: AiSdkShape) =>
  request.prompt.flatMap((message, index) => {
    const control = message.providerOptions?.anthropic?.cacheControl
    const text =
      typeof message.content === "string" ? message.content : message.content.map((part) => part.text ?? "").join("")
    return control === undefined ? [] : [{ at: `prompt[${index}]`, text, control }]
  })

const idOf = (event: WindowEvent.EventOf<"PromptRendered">, window: Window.Window, text: string) =>
  Window.messages(window).find((message) => message.parts.some((part) => part.type === "text" && part.text === text))
    ?.id ?? `no message "${text}" in the window before render ${event.id}`

describe("caller cache hints (AI SDK)", () => {
  it("the middleware records the caller's breakpoints, places them, and the render rebuilds with them", async () => {
    const filename = tempDb()
    const middleware = ctxlogMiddleware({ sqlite: filename, stream: "hints" })
    const { model, prompts } = anthropicModel(["It fails in a.ts.", "Fixed."])
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages: Array<ModelMessage> = [
      { role: "system", content: "You are a build engineer.", providerOptions: ephemeral },
      {
        role: "user",
        content: [{ type: "text", text: "Why does the build fail?", providerOptions: hour }]
      }
    ]
    const first = await generateText({ model: wrapped, messages })
    // The caller moves its conversation breakpoint to the newest message, as agents do.
    const second = await generateText({
      model: wrapped,
      messages: [
        messages[0] as ModelMessage,
        { role: "user", content: "Why does the build fail?" },
        ...first.response.messages,
        { role: "user", content: "Fix it.", providerOptions: ephemeral }
      ]
    })
    expect(second.text).toBe("Fixed.")
    await middleware.close()

    // The model received the breakpoints on the messages the caller put them on.
    const controls = (prompt: LanguageModelV3CallOptions["prompt"] | undefined) =>
      (prompt ?? []).map((message) => message.providerOptions?.anthropic?.cacheControl ?? null)
    expect(controls(prompts[0])).toEqual([{ type: "ephemeral" }, { type: "ephemeral", ttl: "1h" }])
    expect(controls(prompts[1])).toEqual([{ type: "ephemeral" }, null, null, { type: "ephemeral" }])

    const log = await readBack(filename, "hints")
    expect(log.verification).toMatchObject({ renders: 2, verified: 2, failures: [] })
    const [one, two] = rebuiltRenders(log)
    if (one === undefined || two === undefined) throw new Error("two renders expected")
    expect(one.event.render?.cacheHints).toEqual([
      { messageId: idOf(one.event, one.before, "You are a build engineer.") },
      { messageId: idOf(one.event, one.before, "Why does the build fail?"), ttl: "1h" }
    ])
    expect(markersOf(one.request)).toEqual([
      { at: "prompt[0]", text: "You are a build engineer.", control: { type: "ephemeral" } },
      { at: "prompt[1]", text: "Why does the build fail?", control: { type: "ephemeral", ttl: "1h" } }
    ])
    // The recorded render is the prompt the model received.
    expect(one.request.prompt).toEqual(JSON.parse(JSON.stringify(prompts[0])))
    expect(two.event.render?.cacheHints).toEqual([
      { messageId: idOf(two.event, two.before, "You are a build engineer.") },
      { messageId: idOf(two.event, two.before, "Fix it.") }
    ])
    expect(markersOf(two.request)).toEqual([
      { at: "prompt[0]", text: "You are a build engineer.", control: { type: "ephemeral" } },
      { at: "prompt[3]", text: "Fix it.", control: { type: "ephemeral" } }
    ])
    expect(two.request.prompt).toEqual(JSON.parse(JSON.stringify(prompts[1])))
    console.log("hinted renders:", JSON.stringify(log.verification), JSON.stringify(markersOf(two.request)))
  })

  it("prepareStep records the caller's breakpoints and returns them on the step's messages", async () => {
    const filename = tempDb()
    const steps = ctxlogPrepareStep({ sqlite: filename, stream: "hints-steps" })
    const { model, prompts } = anthropicModel(["The tests pass."])
    await generateText({
      model,
      system: "You are terse.",
      messages: [{ role: "user", content: "Do the tests pass?", providerOptions: hour }],
      stopWhen: stepCountIs(1),
      prepareStep: steps.prepareStep,
      onStepFinish: steps.onStepFinish
    })
    await steps.close()
    // The step's messages carried the breakpoint to the model (the AI SDK's system prompt stays its own).
    expect(prompts[0]?.map((message) => message.providerOptions?.anthropic?.cacheControl ?? null)).toEqual([
      null,
      { type: "ephemeral", ttl: "1h" }
    ])
    const log = await readBack(filename, "hints-steps")
    expect(log.verification).toMatchObject({ renders: 1, verified: 1, failures: [] })
    const [render] = rebuiltRenders(log)
    expect(render?.event.render?.cacheHints).toEqual([{ messageId: log.window.history[0]?.id, ttl: "1h" }])
    expect(render === undefined ? [] : markersOf(render.request)).toEqual([
      { at: "prompt[0]", text: "Do the tests pass?", control: { type: "ephemeral", ttl: "1h" } }
    ])
  })
})
