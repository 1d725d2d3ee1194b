/**
 * Issue 35, defect 3: with the SDK's real `OpenAIResponsesModel` (through `OpenAIProvider`) pointed at
 * a local HTTP server on 127.0.0.1 that answers with the Responses API's own shapes (`resp_…`, `msg_…`,
 * `fc_…`, `rs_…` ids, reasoning with encrypted content, cached-token usage) and refuses, as the API
 * does, an input item whose id does not start with its kind's prefix (400 "Expected an ID that begins
 * with 'msg'"), runs after the first go through: the session sends no id it was not given. Each run
 * has a tool call, so every request after the first carries the model's own items back.
 *
 * Self-contained (published names only): the packed-tarball test runs it in a project that installed
 * our tarballs.
 */
import { mkdtempSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CtxlogSession } from "@ctxlog/integrations/openai-agents"
import { Agent, OpenAIProvider, run, setTracingDisabled, tool } from "@openai/agents"
import { afterAll, beforeAll, expect, it } from "vitest"
import { z } from "zod"

setTracingDisabled(true)

const prefixes: { readonly [type: string]: string } = {
  message: "msg",
  function_call: "fc",
  reasoning: "rs",
  compaction: "cmp"
}

interface Received {
  readonly input: ReadonlyArray<{ readonly type?: string; readonly id?: string; readonly role?: string }>
  readonly status: number
}

const received: Array<Received> = []
let counter = 0

/** The Responses API's answer to a request: a tool call first, then (its result came back) a message. */
const answer = (input: Received["input"]) => {
  const n = ++counter
  const lastIsResult = input[input.length - 1]?.type === "function_call_output"
  const output = lastIsResult
    ? [
        {
          type: "message",
          id: `msg_${n}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: `Done (${n}).`, annotations: [] }]
        }
      ]
    : [
        { type: "reasoning", id: `rs_${n}`, summary: [], encrypted_content: `gAAAAB-encrypted-${n}` },
        {
          type: "function_call",
          id: `fc_${n}`,
          call_id: `call_${n}`,
          name: "lookup",
          arguments: JSON.stringify({ key: `k${n}` }),
          status: "completed"
        }
      ]
  return {
    id: `resp_${n}`,
    object: "response",
    created_at: 1_760_000_000 + n,
    status: "completed",
    model: "gpt-4.1",
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: {
      input_tokens: 420,
      input_tokens_details: { cached_tokens: 256 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 450
    }
  }
}

const handle = (request: IncomingMessage, response: ServerResponse) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { readonly input?: Received["input"] }
    const input = Array.isArray(body.input) ? body.input : []
    const send = (status: number, value: unknown) => {
      received.push({ input, status })
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify(value))
    }
    if (request.url !== "/v1/responses") return send(404, { error: { message: `no route ${request.url}` } })
    for (const [index, item] of input.entries()) {
      const prefix = prefixes[item.type ?? "message"]
      if (item.id !== undefined && prefix !== undefined && !item.id.startsWith(prefix)) {
        return send(400, {
          error: {
            message: `Invalid 'input[${index}].id': '${item.id}'. Expected an ID that begins with '${prefix}'.`,
            type: "invalid_request_error",
            param: `input[${index}].id`,
            code: "invalid_value"
          }
        })
      }
    }
    send(200, answer(input))
  })
}

const server = createServer(handle)
let baseURL = ""

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

it("runs after the first go through the real OpenAIResponsesModel: no item carries an id it was not given", async () => {
  const session = new CtxlogSession({
    sqlite: join(mkdtempSync(join(tmpdir(), "ctxlog-agents-http-")), "agent.db"),
    sessionId: "http"
  })
  const model = await new OpenAIProvider({ apiKey: "sk-test", baseURL, useResponses: true }).getModel("gpt-4.1")
  const lookup = tool({
    name: "lookup",
    description: "Look a key up",
    parameters: z.object({ key: z.string() }),
    execute: async ({ key }) => `value of ${key}`
  })
  const agent = new Agent({ name: "looker", instructions: "Look things up.", model, tools: [lookup] })
  for (const question of ["First?", "Second?", "Third?"]) {
    const result = await run(agent, question, { session, callModelInputFilter: session.callModelInputFilter })
    expect(result.finalOutput).toMatch(/^Done/)
  }
  // The session holds each item once, as the runner stored it (function calls without their ids).
  const stored = await session.getItems()
  expect(stored.map((item) => item.type)).toEqual(
    Array.from({ length: 3 }, () => ["message", "reasoning", "function_call", "function_call_result", "message"]).flat()
  )
  expect(stored.filter((item) => item.type === "function_call").every((item) => !("id" in item))).toBe(true)
  await session.close()
  expect(received.map((request) => request.status)).toEqual([200, 200, 200, 200, 200, 200])
  // The last request carried the model's own items back with their ids (function calls without theirs,
  // as the runner stores them) and the user's without any.
  const last = received[received.length - 1]?.input ?? []
  expect(last.filter((item) => item.id !== undefined).map((item) => item.id?.slice(0, 3))).toEqual([
    "rs_",
    "msg",
    "rs_",
    "msg",
    "rs_"
  ])
  expect(last.filter((item) => item.role === "user").every((item) => item.id === undefined)).toBe(true)
})
