// Issue 35: `generateText` with tools over several steps, through `ctxlogMiddleware` and through
// `ctxlogPrepareStep`, with the real `@ai-sdk/openai` (Responses model) and `@ai-sdk/anthropic` providers
// pointed (`baseURL`) at a local HTTP server on 127.0.0.1 that answers with those providers' own response
// shapes (test/fixtures/providers/README.md cites the vercel/ai fixtures they come from): item ids,
// reasoning with encrypted content and signatures, cache usage, citations. On ai 6 (@ai-sdk/* 3) and on
// ai 7 (@ai-sdk/* 4, installed under npm aliases), on Node 20.
//
// Per case: step 1 calls `read_file` (reasoning + tool call), step 2 answers; then a follow-up turn with the
// whole conversation. The provider must get back what it gave (the server checks the request bodies: item
// ids / encrypted reasoning, thinking signatures, citations), ctxlog records the usage with its cache
// tokens, and every render rebuilds.
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { createAnthropic as createAnthropic3 } from "@ai-sdk/anthropic"
import { createAnthropic as createAnthropic4 } from "@ai-sdk/anthropic-v4"
import { createOpenAI as createOpenAI3 } from "@ai-sdk/openai"
import { createOpenAI as createOpenAI4 } from "@ai-sdk/openai-v4"
import * as ai6 from "ai"
import * as ai7 from "ai-v7"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { z } from "zod"
import { ctxlogMiddleware, ctxlogPrepareStep } from "../src/aiSdk.js"
import { readBack, tempDb } from "./support.js"

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "providers", `${name}.json`), "utf8"))

type Provider = "openai" | "anthropic"
const answers: Record<Provider, ReadonlyArray<string>> = {
  // step 1 (tool call), step 2 (answer), the follow-up turn (answer again)
  openai: ["openai-tool-call", "openai-answer", "openai-answer"],
  anthropic: ["anthropic-tool-call", "anthropic-answer", "anthropic-answer"]
}

/** The local provider: answers each request with the next fixture of the case, keeps every request body. */
let server: Server
let baseURL = ""
let script: Array<unknown> = []
const bodies: Array<Record<string, unknown>> = []

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let text = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => {
      text += chunk
    })
    request.on("end", () => resolve(text))
    request.on("error", reject)
  })

beforeAll(async () => {
  server = createServer((request, response) => {
    void readBody(request).then((text) => {
      bodies.push(JSON.parse(text) as Record<string, unknown>)
      const next = script.shift()
      response.writeHead(next === undefined ? 500 : 200, { "content-type": "application/json" })
      response.end(JSON.stringify(next ?? { error: { message: "the script has no more answers" } }))
    })
  })
  // The AI SDK keeps its sockets alive between calls: an idle socket the server closes (Node's default is
  // 5 s) just as the next call reuses it fails that call with ECONNRESET, and the SDK retries it — one
  // more request and one more render, seen under load. The server keeps idle sockets past any test.
  server.keepAliveTimeout = 600_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const readFileInput = z.object({ path: z.string() })
const contents = "import { config } from './config'\nexport const build = () => config\n"

/** One `ai` line: a tool-using run of two steps and a follow-up turn, by one integration, on one provider. */
interface Line {
  readonly run: (
    provider: Provider,
    via: "plain" | "middleware" | "prepareStep",
    db: string,
    stream: string
  ) => Promise<{ readonly first: string; readonly second: string }>
}

const ai6Line: Line = {
  run: async (provider, via, db, stream) => {
    const model =
      provider === "openai"
        ? createOpenAI3({ baseURL, apiKey: "test" }).responses("o3")
        : createAnthropic3({ baseURL, apiKey: "test" })("claude-sonnet-4-5")
    const tools = {
      read_file: ai6.tool({ description: "Read a file", inputSchema: readFileInput, execute: async () => contents })
    }
    const user: ai6.ModelMessage = { role: "user", content: "Why does the build fail?" }
    const followUp: ai6.ModelMessage = { role: "user", content: "Are you sure?" }
    if (via === "plain") {
      const first = await ai6.generateText({ model, tools, stopWhen: ai6.stepCountIs(3), messages: [user] })
      const second = await ai6.generateText({ model, tools, messages: [user, ...first.response.messages, followUp] })
      return { first: first.text, second: second.text }
    }
    if (via === "middleware") {
      const middleware = ctxlogMiddleware({ sqlite: db, stream })
      const wrapped = ai6.wrapLanguageModel({ model, middleware })
      const first = await ai6.generateText({ model: wrapped, tools, stopWhen: ai6.stepCountIs(3), messages: [user] })
      const second = await ai6.generateText({
        model: wrapped,
        tools,
        messages: [user, ...first.response.messages, followUp]
      })
      await middleware.close()
      return { first: first.text, second: second.text }
    }
    const steps = ctxlogPrepareStep({ sqlite: db, stream })
    const hooks = { prepareStep: steps.prepareStep, onStepFinish: steps.onStepFinish }
    const first = await ai6.generateText({ model, tools, stopWhen: ai6.stepCountIs(3), messages: [user], ...hooks })
    const second = await ai6.generateText({
      model,
      tools,
      messages: [user, ...first.response.messages, followUp],
      ...hooks
    })
    await steps.close()
    return { first: first.text, second: second.text }
  }
}

const ai7Line: Line = {
  run: async (provider, via, db, stream) => {
    const model =
      provider === "openai"
        ? createOpenAI4({ baseURL, apiKey: "test" }).responses("o3")
        : createAnthropic4({ baseURL, apiKey: "test" })("claude-sonnet-4-5")
    const tools = {
      read_file: ai7.tool({ description: "Read a file", inputSchema: readFileInput, execute: async () => contents })
    }
    const user: ai7.ModelMessage = { role: "user", content: "Why does the build fail?" }
    const followUp: ai7.ModelMessage = { role: "user", content: "Are you sure?" }
    if (via === "plain") {
      const first = await ai7.generateText({ model, tools, stopWhen: ai7.stepCountIs(3), messages: [user] })
      const second = await ai7.generateText({ model, tools, messages: [user, ...first.response.messages, followUp] })
      return { first: first.text, second: second.text }
    }
    if (via === "middleware") {
      const middleware = ctxlogMiddleware({ sqlite: db, stream })
      const wrapped = ai7.wrapLanguageModel({ model, middleware })
      const first = await ai7.generateText({ model: wrapped, tools, stopWhen: ai7.stepCountIs(3), messages: [user] })
      const second = await ai7.generateText({
        model: wrapped,
        tools,
        messages: [user, ...first.response.messages, followUp]
      })
      await middleware.close()
      return { first: first.text, second: second.text }
    }
    const steps = ctxlogPrepareStep({ sqlite: db, stream })
    // Here `ai` resolves to ai 6, so the hooks are declared with its message types; a project on ai 7
    // gets ai 7's (scripts/pack-check.mjs typechecks that). The values are the same.
    const hooks = {
      prepareStep: async (options: {
        readonly messages: Array<ai7.ModelMessage>
        readonly model: unknown
        readonly stepNumber: number
      }) =>
        (await steps.prepareStep({
          ...options,
          messages: options.messages as unknown as Array<ai6.ModelMessage>
        })) as unknown as { messages: Array<ai7.ModelMessage> },
      onStepFinish: steps.onStepFinish
    }
    const first = await ai7.generateText({ model, tools, stopWhen: ai7.stepCountIs(3), messages: [user], ...hooks })
    const second = await ai7.generateText({
      model,
      tools,
      messages: [user, ...first.response.messages, followUp],
      ...hooks
    })
    await steps.close()
    return { first: first.text, second: second.text }
  }
}

const answerText = "The build fails in src/build.ts: the import of ./config is missing."
const json = (value: unknown) => JSON.stringify(value)

describe.sequential("real AI SDK providers against a local server (issue 35)", () => {
  for (const [label, line] of [
    ["ai 6", ai6Line],
    ["ai 7", ai7Line]
  ] as const) {
    for (const provider of ["openai", "anthropic"] as const) {
      for (const via of ["middleware", "prepareStep"] as const) {
        it(`${label}, @ai-sdk/${provider}, ${via}: tools over several steps`, async () => {
          // What the provider is sent without ctxlog, then with it: the same request bodies.
          script = answers[provider].map(fixture)
          bodies.length = 0
          await line.run(provider, "plain", "", "")
          const plain = bodies.splice(0).map(json)
          script = answers[provider].map(fixture)
          const db = tempDb()
          const stream = `${provider}-${via}`
          const { first, second } = await line.run(provider, via, db, stream)
          expect(first).toContain(answerText)
          expect(second).toContain(answerText)
          const sent = bodies.map(json)
          expect(sent.slice(0, 2)).toEqual(plain.slice(0, 2))
          if (label === "ai 6") expect(sent[2]).toEqual(plain[2])
          else {
            // ai 7's `response.messages` holds the last step only: the caller's follow-up lacks the tool
            // round, which the log holds. ctxlog sends the whole conversation: step 2's messages, then the
            // follow-up's messages after its first (the user's question).
            const field = provider === "openai" ? "input" : "messages"
            const itemsOf = (body: string | undefined): Array<unknown> =>
              (JSON.parse(body ?? "{}") as Record<string, Array<unknown>>)[field] ?? []
            const plainFollowUp = JSON.parse(plain[2] ?? "{}") as Record<string, unknown>
            const step2Items = itemsOf(sent[1])
            const expected = { ...plainFollowUp, [field]: [...step2Items, ...itemsOf(plain[2]).slice(1)] }
            expect(JSON.parse(sent[2] ?? "{}")).toEqual(expected)
          }
          const [, step2, followUp] = sent
          if (provider === "openai") {
            // The reasoning of step 1 goes back by its item id; the follow-up also holds the answer's message.
            for (const body of [step2, followUp])
              expect(body).toContain("rs_08c7eac45286fefb006a5f41bc7b8881a3a8cc432451e96393")
            expect(followUp).toContain("msg_0f35ed53160b395301693cc95c1d288190997018450969162b")
          } else {
            // The thinking block goes back with its signature; the cited answer with its citations.
            for (const body of [step2, followUp]) expect(body).toContain('"signature":"Eq4CCpIBCBIYAipAM+SGYGx7V1aP')
            expect(followUp).toContain('"citations":[{"type":"web_search_result_location"')
          }
          const log = await readBack(db, stream)
          expect(log.verification).toMatchObject({ renders: 3, verified: 3, failures: [] })
          const usage = log.events.flatMap((stored) => (stored.event._tag === "UsageReported" ? [stored.event] : []))
          expect(usage.length).toBe(3)
          if (provider === "openai") {
            expect(usage.map((event) => event.cacheReadTokens)).toEqual([1024, 1152, 1152])
          } else {
            expect(usage.map((event) => [event.cacheWriteTokens, event.cacheReadTokens])).toEqual([
              [2048, 0],
              [0, 2048],
              [0, 2048]
            ])
          }
          // The provider data is in the log, on the parts it came with.
          const history = json(log.window.history)
          if (provider === "openai")
            expect(history).toContain('"itemId":"msg_0f35ed53160b395301693cc95c1d288190997018450969162b"')
          else expect(history).toContain('"citations":[{"type":"web_search_result_location"')
        })
      }
    }
  }
})
