// Issue 20's acceptance for the agent against a local server of each provider protocol (Anthropic
// Messages, OpenAI Chat Completions, OpenAI Responses, Ollama's OpenAI-compatible API): a few user turns
// with tool calls, driven in-process through `Agent.turn` on a SQLite file, then the log read back from
// the file: every `PromptRendered` rebuilds and verifies (`RenderRecord.verifyAll`: renders ===
// verified, no failures, none over the window), and each render's hash is the sha-256 of the bytes the
// server received for that model call, in order.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventHash, ToolPairs } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { json, type Received, serve } from "../../../packages/providers/test/server.js"
import * as Agent from "../src/Agent.js"
import * as Provider from "../src/Provider.js"
import * as Stack from "../src/Stack.js"
import * as Tools from "../src/Tools.js"
import * as Ui from "../src/Ui.js"
import { readStream } from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-rebuild-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Response = Parameters<Parameters<typeof serve>[0]>[1]
type Call = { readonly id: string; readonly name: string; readonly input: string }

/** The model's script: request 2k-1 of turn k calls tools, request 2k answers. */
const script = (n: number): { readonly text: string; readonly calls: ReadonlyArray<Call> } => {
  const turn = Math.ceil(n / 2)
  if (n % 2 === 0) return { text: `Turn ${turn} done.`, calls: [] }
  if (turn === 1)
    return { text: "Reading the log.", calls: [{ id: "c1", name: "read_file", input: '{"path":"big.log"}' }] }
  if (turn === 2) {
    return {
      text: "Looking around, then writing.",
      calls: [
        { id: "c2a", name: "list_dir", input: '{"path":"."}' },
        { id: "c2b", name: "write_file", input: '{"path":"notes/n.txt","content":"a note"}' }
      ]
    }
  }
  return {
    text: "Reading both again.",
    calls: [
      { id: `c${turn}a`, name: "read_file", input: '{"path":"big.log"}' },
      { id: `c${turn}b`, name: "read_file", input: '{"path":"hello.txt"}' }
    ]
  }
}

const sse = (response: Response, events: ReadonlyArray<string>) => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.end(events.join(""))
}

// --- the four wire formats -------------------------------------------------------------------------

const chatCompletions = (response: Response, n: number) => {
  const { text, calls } = script(n)
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  sse(response, [
    chunk({ role: "assistant", content: text }),
    ...calls.map((call, index) =>
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: call.input } }]
      })
    ),
    chunk({}, calls.length > 0 ? "tool_calls" : "stop"),
    `data: ${JSON.stringify({ id: `chatcmpl-${n}`, object: "chat.completion.chunk", model: "m", choices: [], usage: { prompt_tokens: 500, completion_tokens: 20, total_tokens: 520 } })}\n\n`,
    "data: [DONE]\n\n"
  ])
}

const ev = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`

const messages = (response: Response, n: number) => {
  const { text, calls } = script(n)
  sse(response, [
    ev("message_start", {
      message: {
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        content: [],
        model: "m",
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 500, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 }
      }
    }),
    ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
    ev("content_block_stop", { index: 0 }),
    ...calls.flatMap((call, i) => [
      ev("content_block_start", {
        index: i + 1,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} }
      }),
      ev("content_block_delta", { index: i + 1, delta: { type: "input_json_delta", partial_json: call.input } }),
      ev("content_block_stop", { index: i + 1 })
    ]),
    ev("message_delta", {
      delta: { stop_reason: calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: 20 }
    }),
    ev("message_stop", {})
  ])
}

const responses = (response: Response, n: number) => {
  const { text, calls } = script(n)
  const created = { id: `resp_${n}`, object: "response", model: "m", status: "in_progress", output: [] }
  sse(response, [
    ev("response.created", { response: created }),
    ev("response.output_item.added", {
      output_index: 0,
      item: { type: "message", id: `msg_${n}`, role: "assistant", content: [] }
    }),
    ev("response.output_text.delta", { item_id: `msg_${n}`, output_index: 0, content_index: 0, delta: text }),
    ...calls.flatMap((call, i) => {
      const item = { type: "function_call", id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: "" }
      return [
        ev("response.output_item.added", { output_index: i + 1, item }),
        ev("response.function_call_arguments.delta", { item_id: item.id, output_index: i + 1, delta: call.input }),
        ev("response.output_item.done", { output_index: i + 1, item: { ...item, arguments: call.input } })
      ]
    }),
    ev("response.completed", {
      response: { ...created, status: "completed", usage: { input_tokens: 500, output_tokens: 20 } }
    })
  ])
}

const cases = [
  {
    provider: "anthropic",
    path: "/v1/messages",
    respond: messages,
    options: (url: string) => ({ baseUrl: url, env: { ANTHROPIC_API_KEY: "test-key" } })
  },
  {
    provider: "openai",
    path: "/v1/chat/completions",
    respond: chatCompletions,
    options: (url: string) => ({ baseUrl: `${url}/v1`, env: { OPENAI_API_KEY: "test-key" } })
  },
  {
    provider: "openai-responses",
    path: "/v1/responses",
    respond: responses,
    options: (url: string) => ({ baseUrl: `${url}/v1`, env: { OPENAI_API_KEY: "test-key" } })
  },
  {
    provider: "ollama",
    path: "/v1/chat/completions",
    respond: chatCompletions,
    options: (url: string) => ({ env: { OLLAMA_HOST: url.replace("http://", "") } })
  }
] as const

const turns = [
  "Read big.log and tell me what it says.",
  "List the files and leave a note.",
  "Check both files again.",
  "And once more."
]

describe("the agent against each provider protocol: every render rebuilds", () => {
  for (const testCase of cases) {
    it.scopedLive(
      `${testCase.provider}: ${turns.length} turns with tool calls; every PromptRendered rebuilds, verifies, fits, and hashes the bytes sent`,
      () =>
        Effect.gen(function* () {
          const server = yield* serve((request: Received, response, n) => {
            if (request.method !== "POST" || request.url !== testCase.path) {
              return json(response, 404, { error: { message: `unexpected ${request.method} ${request.url}` } })
            }
            testCase.respond(response, n)
          })
          const root = join(dir, testCase.provider)
          const ws = join(root, "ws")
          mkdirSync(ws, { recursive: true })
          writeFileSync(join(ws, "hello.txt"), "hello from the workspace\n")
          // Larger than the window: the result is cut (by the builder's limit and the fit), never lost.
          writeFileSync(
            join(ws, "big.log"),
            Array.from({ length: 4000 }, (_, i) => `line ${i}: status ok, nothing to see`).join("\n")
          )
          const db = join(root, "agent.db")
          const provider = yield* Provider.make({
            provider: testCase.provider,
            model: "test-model",
            // A small window: the big read and the turns after it make the turn's tiers, seams and fit run.
            contextWindow: 4096,
            maxOutputTokens: 512,
            retry: { maxRetries: 0 },
            ...testCase.options(server.url)
          })
          const tools = Tools.make({ workspace: ws, timeoutMs: 5_000 })
          const config: Agent.Config = {
            stream: `rebuild-${testCase.provider}`,
            provider,
            tools,
            ui: Ui.make({ quiet: true })
          }
          const reports = yield* Effect.gen(function* () {
            yield* Agent.open(config, { knowledge: [] })
            const done = []
            for (const text of turns) done.push(yield* Agent.turn(config, text))
            return done
          }).pipe(Effect.provide(Stack.layer({ _tag: "sqlite", filename: db }, Agent.budgetFor(config))))

          assert.deepStrictEqual(
            reports.map((report) => report.modelCalls),
            turns.map(() => 2)
          )
          assert.strictEqual(server.received.length, 2 * turns.length)
          const { envelopes, window } = yield* readStream(db, config.stream)
          const verification = RenderRecord.verifyAll(envelopes)
          assert.deepStrictEqual(
            verification.failures.map((failure) => failure.message),
            []
          )
          assert.strictEqual(verification.renders, 2 * turns.length)
          assert.strictEqual(verification.verified, verification.renders)
          assert.deepStrictEqual([...verification.overWindow], [])
          // The render of each model call is the request the server received for it, byte for byte.
          const renders = envelopes.flatMap((e) => (e.event._tag === "PromptRendered" ? [e.event] : []))
          assert.deepStrictEqual(
            renders.map((render) => render.sha256),
            server.received.map((request) => EventHash.sha256(request.body))
          )
          for (const render of renders) assert.strictEqual(render.provider, testCase.provider)
          // Each big read reached the model in the next request (whole or cut), never dropped.
          for (const turn of [1, 3, 4]) assert.include(server.received[2 * turn - 1]?.body ?? "", "line 0: status ok")
          assert.deepStrictEqual(ToolPairs.pendingCalls(window.history), [])
          assert.isTrue(EventHash.verify(envelopes).ok)
          console.log(
            `${testCase.provider}: ${verification.renders} renders, ${verification.verified} verified, ${verification.failures.length} failures, ${verification.overWindow.length} over the window; tiers ${reports.map((r) => r.tiers.join(",") || "none").join(" | ")}`
          )
        }),
      120_000
    )
  }
})
