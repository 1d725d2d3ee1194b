// Real tool-calling turns against local HTTP servers that speak the OpenAI chat-completions API and the
// Anthropic messages API: streaming, two tool calls in one answer (one refused: a path outside the
// workspace), a 429 answered by a retry, a 500 in the middle of a stream answered by a retry.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventHash, Message, ToolPairs, Window } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readStream, runCli, sessionOf, spawnCli, waitFor } from "./support/cli.js"
import { json, parse, type Received, serve } from "../../../packages/providers/test/server.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-providers-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A fresh workspace with one file in it. */
const workspace = (name: string) => {
  const root = join(dir, name, "ws")
  mkdirSync(root, { recursive: true })
  writeFileSync(join(root, "hello.txt"), "hello from the workspace\n")
  return root
}

/** Write an SSE body in pieces. */
const writeSse = (response: Parameters<Parameters<typeof serve>[0]>[1], lines: ReadonlyArray<string>, end = true) => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const text = lines.join("")
  for (let at = 0; at < text.length; at += 41) response.write(text.slice(at, at + 41))
  if (end) response.end()
}

/** The tool results the model was sent in a request body (either API). */
const toolResultsIn = (body: string): string => JSON.stringify(parse(body))

// --- OpenAI chat completions ---------------------------------------------------------------------

const oaChunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", model: "gpt-test", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const oaUsage = `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", model: "gpt-test", choices: [], usage: { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 } })}\n\n`

const openaiHandler =
  (authorization: string | undefined) =>
  (request: Received, response: Parameters<Parameters<typeof serve>[0]>[1], n: number) => {
    if (request.url !== "/v1/chat/completions" || request.headers.authorization !== authorization) {
      return json(response, 404, { error: { message: `unexpected ${request.url}` } })
    }
    if (n === 1)
      return json(response, 429, { error: { message: "slow down", type: "rate_limit" } }, { "retry-after": "0" })
    if (n === 2) {
      return writeSse(response, [
        oaChunk({ role: "assistant", content: "" }),
        oaChunk({ content: "Writing a note, " }),
        oaChunk({ content: "then peeking outside." }),
        oaChunk({
          tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "write_file", arguments: "" } }]
        }),
        oaChunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":"notes/hi.txt",' } }] }),
        oaChunk({ tool_calls: [{ index: 0, function: { arguments: '"content":"written by the model"}' } }] }),
        oaChunk({
          tool_calls: [
            {
              index: 1,
              id: "call_r",
              type: "function",
              function: { name: "read_file", arguments: '{"path":"../secret.txt"}' }
            }
          ]
        }),
        oaChunk({}, "tool_calls"),
        oaUsage,
        "data: [DONE]\n\n"
      ])
    }
    if (n === 3) {
      // A server error in the middle of the stream.
      writeSse(response, [oaChunk({ role: "assistant", content: "" }), oaChunk({ content: "Half an ans" })], false)
      response.end(
        `data: ${JSON.stringify({ error: { message: "The server had an error", type: "server_error" } })}\n\n`
      )
      return
    }
    return writeSse(response, [
      oaChunk({ role: "assistant", content: "" }),
      oaChunk({ content: "Done: the note is written; " }),
      oaChunk({ content: "the outside path was refused." }),
      oaChunk({}, "stop"),
      oaUsage,
      "data: [DONE]\n\n"
    ])
  }

// --- Anthropic messages --------------------------------------------------------------------------

const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
const start = ev("message_start", {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    content: [],
    model: "claude-test",
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 400, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 }
  }
})
const text = (index: number, value: string) => [
  ev("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }),
  ev("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: value } }),
  ev("content_block_stop", { type: "content_block_stop", index })
]
const toolUse = (index: number, id: string, name: string, input: string) => [
  ev("content_block_start", {
    type: "content_block_start",
    index,
    content_block: { type: "tool_use", id, name, input: {} }
  }),
  ev("content_block_delta", {
    type: "content_block_delta",
    index,
    delta: { type: "input_json_delta", partial_json: input.slice(0, 10) }
  }),
  ev("content_block_delta", {
    type: "content_block_delta",
    index,
    delta: { type: "input_json_delta", partial_json: input.slice(10) }
  }),
  ev("content_block_stop", { type: "content_block_stop", index })
]
const stop = (reason: string) => [
  ev("message_delta", {
    type: "message_delta",
    delta: { stop_reason: reason, stop_sequence: null },
    usage: { output_tokens: 20 }
  }),
  ev("message_stop", { type: "message_stop" })
]

const anthropicHandler = (request: Received, response: Parameters<Parameters<typeof serve>[0]>[1], n: number) => {
  if (request.url !== "/v1/messages" || request.headers["x-api-key"] !== "test-anthropic-key") {
    return json(response, 404, { type: "error", error: { type: "not_found_error", message: request.url } })
  }
  if (n === 1) {
    return json(
      response,
      429,
      { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
      { "retry-after": "0" }
    )
  }
  if (n === 2) {
    return writeSse(response, [
      start,
      ...text(0, "Writing a note, then peeking outside."),
      ...toolUse(1, "toolu_w", "write_file", '{"path":"notes/hi.txt","content":"written by the model"}'),
      ...toolUse(2, "toolu_r", "read_file", '{"path":"../secret.txt"}'),
      ...stop("tool_use")
    ])
  }
  if (n === 3) {
    return writeSse(response, [
      start,
      ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      ev("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: "Half an ans" }
      }),
      ev("error", { type: "error", error: { type: "api_error", message: "Internal server error" } })
    ])
  }
  return writeSse(response, [
    start,
    ...text(0, "Done: the note is written; the outside path was refused."),
    ...stop("end_turn")
  ])
}

// --- OpenAI Responses -----------------------------------------------------------------------------

const rs = (type: string, rest: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...rest })}\n\n`
const rsCreated = { id: "resp_1", object: "response", model: "gpt-test", status: "in_progress", output: [] }
const rsCompleted = rs("response.completed", {
  response: { ...rsCreated, status: "completed", usage: { input_tokens: 321, output_tokens: 12 } }
})
const rsText = (index: number, value: string) => [
  rs("response.output_item.added", {
    output_index: index,
    item: { type: "message", id: `msg_${index}`, role: "assistant", content: [] }
  }),
  rs("response.output_text.delta", { item_id: `msg_${index}`, output_index: index, content_index: 0, delta: value })
]
const rsCall = (index: number, callId: string, name: string, args: string) => {
  const item = { type: "function_call", id: `fc_${index}`, call_id: callId, name, arguments: "" }
  return [
    rs("response.output_item.added", { output_index: index, item }),
    rs("response.function_call_arguments.delta", { item_id: item.id, output_index: index, delta: args }),
    rs("response.output_item.done", { output_index: index, item: { ...item, arguments: args } })
  ]
}
/** The reasoning item a reasoning model emits before its answer: it must come back in later requests. */
const rsReasoning = { type: "reasoning", id: "rs_agent_1", summary: [{ type: "summary_text", text: "Plan the note." }] }

const responsesHandler = (request: Received, response: Parameters<Parameters<typeof serve>[0]>[1], n: number) => {
  if (request.url !== "/v1/responses" || request.headers.authorization !== "Bearer test-openai-key") {
    return json(response, 404, { error: { message: `unexpected ${request.url}` } })
  }
  if (n === 1)
    return json(response, 429, { error: { message: "slow down", type: "rate_limit" } }, { "retry-after": "0" })
  if (n === 2) {
    return writeSse(response, [
      rs("response.created", { response: rsCreated }),
      rs("response.output_item.added", { output_index: 0, item: { ...rsReasoning, summary: [] } }),
      rs("response.output_item.done", { output_index: 0, item: rsReasoning }),
      ...rsText(1, "Writing a note, then peeking outside."),
      ...rsCall(2, "call_w", "write_file", '{"path":"notes/hi.txt","content":"written by the model"}'),
      ...rsCall(3, "call_r", "read_file", '{"path":"../secret.txt"}'),
      rsCompleted
    ])
  }
  if (n === 3) {
    // A server error in the middle of the stream.
    return writeSse(response, [
      rs("response.created", { response: rsCreated }),
      ...rsText(0, "Half an ans"),
      rs("error", { code: "server_error", message: "The server had an error" })
    ])
  }
  return writeSse(response, [
    rs("response.created", { response: rsCreated }),
    ...rsText(0, "Done: the note is written; the outside path was refused."),
    rsCompleted
  ])
}

const cases = [
  {
    provider: "openai",
    model: "gpt-test",
    handler: openaiHandler("Bearer test-openai-key"),
    args: (url: string) => ["--base-url", `${url}/v1`],
    env: (_url: string) => ({ OPENAI_API_KEY: "test-openai-key" })
  },
  {
    provider: "anthropic",
    model: "claude-test",
    handler: anthropicHandler,
    args: (url: string) => ["--base-url", url],
    env: (_url: string) => ({ ANTHROPIC_API_KEY: "test-anthropic-key" })
  },
  {
    provider: "openai-responses",
    model: "gpt-test",
    handler: responsesHandler,
    args: (url: string) => ["--base-url", `${url}/v1`],
    env: (_url: string) => ({ OPENAI_API_KEY: "test-openai-key" })
  },
  // Ollama speaks chat completions too; its address comes from OLLAMA_HOST (no key, no --base-url).
  {
    provider: "ollama",
    model: "llama-test",
    handler: openaiHandler(undefined),
    args: (_url: string) => [],
    env: (url: string) => ({ OLLAMA_HOST: url.replace("http://", "") })
  }
] as const

describe("providers over HTTP", () => {
  for (const testCase of cases) {
    it.scopedLive(
      `${testCase.provider}: streamed tool calls run in the workspace; a 429 and a 500 mid-stream are retried`,
      () =>
        Effect.gen(function* () {
          const server = yield* serve(testCase.handler)
          const ws = workspace(testCase.provider)
          writeFileSync(join(dir, testCase.provider, "secret.txt"), "TOP-SECRET-42")
          const db = join(dir, testCase.provider, "agent.db")
          const ran = yield* Effect.promise(() =>
            runCli(
              [
                "run",
                "--provider",
                testCase.provider,
                "--model",
                testCase.model,
                ...testCase.args(server.url),
                "--workspace",
                ws,
                "--db",
                db,
                "--task",
                "Leave a note in notes/hi.txt and look at ../secret.txt"
              ],
              { env: testCase.env(server.url) }
            )
          )
          assert.strictEqual(ran.code, 0, `${ran.stdout}\n${ran.stderr}`)
          // 429, the tool-call answer, the broken stream, the retried final answer.
          assert.strictEqual(server.received.length, 4)
          assert.include(ran.stdout, "Done: the note is written; the outside path was refused.")
          // The write really happened, inside the workspace; the read outside it was refused to the model.
          assert.strictEqual(readFileSync(join(ws, "notes", "hi.txt"), "utf8"), "written by the model")
          assert.isFalse(existsSync(join(ws, "secret.txt")))
          const afterTools = toolResultsIn(server.received[2]?.body ?? "")
          assert.include(afterTools, "wrote 20 chars to notes/hi.txt")
          assert.include(afterTools, "is outside the workspace")
          for (const request of server.received) assert.notInclude(request.body, "TOP-SECRET-42")
          if (testCase.provider === "openai-responses") {
            // The reasoning item goes back in every later request, right before the answer it led to.
            for (const request of server.received.slice(2)) {
              assert.include(
                request.body,
                `{"type":"reasoning","id":"rs_agent_1","summary":[{"type":"summary_text","text":"Plan the note."}]},` +
                  `{"type":"message","role":"assistant","content":"Writing a note, then peeking outside."}`
              )
            }
          }

          const stream = sessionOf(ran.stdout)
          const { envelopes, window } = yield* readStream(db, stream)
          // Every render sent is in the log: its hash is the hash of the bytes the server received.
          const renders = envelopes.flatMap((e) => (e.event._tag === "PromptRendered" ? [e.event] : []))
          const sent = new Set(server.received.slice(1).map((request) => EventHash.sha256(request.body)))
          assert.strictEqual(renders.length, 2)
          for (const render of renders) {
            assert.isTrue(sent.has(render.sha256))
            assert.strictEqual(render.provider, testCase.provider)
          }
          const usage = envelopes.flatMap((e) => (e.event._tag === "UsageReported" ? [e.event] : []))
          assert.strictEqual(usage.length, 2)
          assert.isAbove(usage[0]?.inputTokens ?? 0, 0)
          // The window: the assistant's two calls, both answered (one an error), the final answer.
          const results = window.history.flatMap((message) => Message.toolResultsOf(message))
          assert.strictEqual(results.length, 2)
          assert.deepStrictEqual(
            results.map((result) => result.isError),
            [false, true]
          )
          assert.deepStrictEqual(ToolPairs.pendingCalls(window.history), [])
          assert.strictEqual(
            Message.textOf(window.history.at(-1) ?? { parts: [] }),
            "Done: the note is written; the outside path was refused."
          )
          assert.deepStrictEqual(
            yield* Window.encode(Window.replay(envelopes.map((e) => e.event))),
            yield* Window.encode(window)
          )
          assert.isTrue(EventHash.verify(envelopes).ok)
        }),
      120_000
    )
  }

  it.scopedLive(
    "Ctrl-C during a model call stops it; the log stays consistent and run --session continues",
    () =>
      Effect.gen(function* () {
        // The server starts an answer and then never finishes it.
        const server = yield* serve((_request, response) => {
          writeSse(
            response,
            [oaChunk({ role: "assistant", content: "" }), oaChunk({ content: "Thinking very slow" })],
            false
          )
        })
        const ws = workspace("interrupt")
        const db = join(dir, "interrupt", "agent.db")
        const child = spawnCli(
          [
            "run",
            "--provider",
            "openai",
            "--model",
            "gpt-test",
            "--base-url",
            `${server.url}/v1`,
            "--workspace",
            ws,
            "--db",
            db
          ],
          { env: { OPENAI_API_KEY: "test-openai-key" } }
        )
        const header = yield* Effect.promise(() => waitFor(child, /session \S+/))
        const stream = sessionOf(header)
        child.stdin.write("please answer\n")
        yield* Effect.promise(() => waitFor(child, /Thinking very slow/))
        let stderr = ""
        child.stderr.on("data", (data: Buffer) => {
          stderr += data.toString()
        })
        const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
        child.kill("SIGINT")
        assert.strictEqual(yield* Effect.promise(() => exited), 130)
        // The hint runs as printed: the exact command, with this database.
        assert.match(stderr, /interrupted: the log is consistent; resume with: /)
        assert.include(
          stderr,
          ` run --session ${stream} --db ${db} --provider openai --model gpt-test --base-url ${server.url}/v1`
        )
        const before = yield* readStream(db, stream)
        // The render was recorded, and so was the unfinished answer, marked, closing the turn.
        assert.strictEqual(before.envelopes.at(-1)?.type, "TurnCompleted")
        assert.strictEqual(
          Message.textOf(before.window.history.at(-1) ?? { parts: [] }),
          "Thinking very slow\n\n[interrupted by the user]"
        )

        const resumed = yield* Effect.promise(() =>
          runCli(["run", "--session", stream, "--db", db, "--workspace", ws, "--task", "again, offline"])
        )
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        const { envelopes, window } = yield* readStream(db, stream)
        assert.strictEqual(envelopes.at(-1)?.type, "TurnCompleted")
        assert.strictEqual(Message.textOf(window.history.at(-1) ?? { parts: [] }), "You said: again, offline")
        assert.isTrue(EventHash.verify(envelopes).ok)
        assert.deepStrictEqual(
          envelopes.slice(0, before.envelopes.length).map((e) => e.hash),
          before.envelopes.map((e) => e.hash)
        )
      }),
    120_000
  )

  it.live("a missing key is a clear error naming the variable, and nothing is written", () =>
    Effect.gen(function* () {
      const db = join(dir, "nokey.db")
      for (const [provider, variable] of [
        ["anthropic", "ANTHROPIC_API_KEY"],
        ["openai", "OPENAI_API_KEY"]
      ] as const) {
        const ran = yield* Effect.promise(() =>
          runCli(["run", "--provider", provider, "--db", db, "--workspace", dir, "--task", "hi"])
        )
        assert.strictEqual(ran.code, 1)
        assert.include(ran.stderr, `needs the environment variable ${variable}`)
      }
      assert.isFalse(existsSync(db))
    })
  )
})
