// Issue 35: AI SDK tool approvals (`needsApproval` tools; `tool-approval-request` and
// `tool-approval-response` parts) through the middleware and `prepareStep`. A call waiting for the
// user's approval is stored and shown, never a render error, and the flow resumes — in the same
// process and in a new one (a new middleware on the same file) — with every render rebuilding.
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider"
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { ctxlogMiddleware, ctxlogPrepareStep } from "../src/aiSdk.js"
import { readBack, tempDb, usage } from "./support.js"

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

const deleteCall: LanguageModelV3GenerateResult = {
  content: [{ type: "tool-call", toolCallId: "c1", toolName: "delete_file", input: JSON.stringify({ path: "a.o" }) }],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage: usage(120, 20),
  warnings: []
}
const done = (text: string): LanguageModelV3GenerateResult => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: "stop" },
  usage: usage(150, 10),
  warnings: []
})

const deleted: Array<string> = []
const tools = {
  delete_file: tool({
    description: "Delete a file",
    inputSchema: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async ({ path }) => {
      deleted.push(path)
      return `deleted ${path}`
    }
  })
}

const approve = (approvalId: string, approved: boolean): ModelMessage => ({
  role: "tool",
  content: [{ type: "tool-approval-response", approvalId, approved, ...(approved ? {} : { reason: "keep it" }) }]
})

const approvalIdOf = (content: ReadonlyArray<{ readonly type: string }>): string => {
  const request = content.find((part) => part.type === "tool-approval-request") as { approvalId?: string } | undefined
  if (request?.approvalId === undefined) throw new Error("no approval request")
  return request.approvalId
}

describe("AI SDK tool approvals (issue 35)", () => {
  for (const restart of [false, true]) {
    it(`middleware: the run pauses for approval and resumes${restart ? " in a new process" : ""}`, async () => {
      const filename = tempDb()
      const first = ctxlogMiddleware({ sqlite: filename, stream: "ap" })
      const { model, prompts } = scripted([deleteCall, done("Deleted a.o.")])
      const user: ModelMessage = { role: "user", content: "Delete a.o" }
      const paused = await generateText({
        model: wrapLanguageModel({ model, middleware: first }),
        tools,
        stopWhen: stepCountIs(3),
        messages: [user]
      })
      const approvalId = approvalIdOf(paused.content)
      let second = first
      if (restart) {
        await first.close()
        second = ctxlogMiddleware({ sqlite: filename, stream: "ap" })
      }
      const resumed = await generateText({
        model: wrapLanguageModel({ model, middleware: second }),
        tools,
        stopWhen: stepCountIs(3),
        messages: [user, ...paused.response.messages, approve(approvalId, true)]
      })
      await second.close()
      expect(resumed.text).toBe("Deleted a.o.")
      // The model's second call holds the approved call and its result.
      expect(prompts[1]?.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
      const log = await readBack(filename, "ap")
      expect(log.window.history.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"])
      expect(log.verification).toMatchObject({ renders: 2, verified: 2, failures: [] })
    })
  }

  it("prepareStep: the paused call is stored with its approval request and shown; the run resumes", async () => {
    const filename = tempDb()
    const steps = ctxlogPrepareStep({ sqlite: filename, stream: "aps" })
    const { model, prompts } = scripted([deleteCall, done("Kept a.o.")])
    const user: ModelMessage = { role: "user", content: "Delete a.o" }
    const options = {
      model,
      tools,
      stopWhen: stepCountIs(3),
      prepareStep: steps.prepareStep,
      onStepFinish: steps.onStepFinish
    }
    const paused = await generateText({ ...options, messages: [user] })
    const approvalId = approvalIdOf(paused.content)

    // Between the runs the log holds the call, pending, with its approval request.
    const between = await readBack(filename, "aps")
    const answer = between.window.history[1]
    expect(answer?.parts.map((part) => part.type)).toEqual(["tool_call", "tool_approval_request"])
    expect(between.verification).toMatchObject({ renders: 1, verified: 1, failures: [] })

    const resumed = await generateText({
      ...options,
      messages: [user, ...paused.response.messages, approve(approvalId, false)]
    })
    await steps.close()
    expect(resumed.text).toBe("Kept a.o.")
    // Denied: the model is told so, as the AI SDK tells it.
    const last = prompts[1]?.at(-1)
    expect(last?.role).toBe("tool")
    expect(JSON.stringify(last?.content)).toContain("execution-denied")
    const log = await readBack(filename, "aps")
    expect(log.window.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant"
    ])
    expect(log.verification).toMatchObject({ renders: 2, verified: 2, failures: [] })
  })
})
