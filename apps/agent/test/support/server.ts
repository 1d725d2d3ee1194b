// Strict local provider servers on 127.0.0.1 for the agent's model-call tests: each checks every request
// as the real API would (method, path, key header, a JSON body with the model, a positive max_tokens,
// stream: true, messages) and answers a request that breaks the protocol with a 400 the test sees;
// otherwise it plays the scripted answer for the n-th request. Plain helpers, no vitest imports.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** A request as the server received it. */
export interface Received {
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** Why the server refused it as a protocol error (undefined: it was valid). */
  readonly refused: string | undefined
}

/** What the server answers to the n-th valid request (1-based). */
export type Answer = (response: ServerResponse, n: number) => void

/** A running server. */
export interface Running {
  readonly url: string
  readonly received: ReadonlyArray<Received>
}

/** Which API the server speaks. */
export type Api = "anthropic" | "openai"

/** The key each server expects. */
export const keys = { anthropic: "test-anthropic-key", openai: "test-openai-key" } as const

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value))
    : undefined

/** Why a request breaks the API's protocol, or undefined. */
const violation = (api: Api, method: string, url: string, headers: IncomingHttpHeaders, body: string) => {
  if (method !== "POST") return `method ${method}`
  if (api === "anthropic") {
    if (url !== "/v1/messages") return `path ${url}`
    if (headers["x-api-key"] !== keys.anthropic) return "x-api-key"
    if (typeof headers["anthropic-version"] !== "string") return "anthropic-version header"
  } else {
    if (url !== "/v1/chat/completions") return `path ${url}`
    if (headers.authorization !== `Bearer ${keys.openai}`) return "authorization"
  }
  if (!String(headers["content-type"]).startsWith("application/json")) return "content-type"
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return "body is not JSON"
  }
  const request = record(parsed)
  if (request === undefined) return "body is not an object"
  if (typeof request.model !== "string" || request.model.length === 0) return "model"
  const limit = api === "anthropic" ? request.max_tokens : (request.max_tokens ?? request.max_completion_tokens)
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0) return "max_tokens"
  if (request.stream !== true) return "stream"
  if (!Array.isArray(request.messages) || request.messages.length === 0) return "messages"
  return undefined
}

/** Start a strict server for the scope; open connections are closed when the scope ends. */
export const serveApi = (api: Api, answer: Answer): Effect.Effect<Running, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly running: Running; readonly close: () => Promise<void> }>((resume) => {
      const received: Array<Received> = []
      let valid = 0
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8")
          const url = request.url ?? ""
          const refused = violation(api, request.method ?? "", url, request.headers, body)
          received.push({ url, headers: request.headers, body, refused })
          if (refused !== undefined) {
            response.writeHead(400, { "content-type": "application/json" })
            response.end(JSON.stringify({ error: { type: "invalid_request_error", message: `refused: ${refused}` } }))
            return
          }
          answer(response, ++valid)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(
          Effect.succeed({
            running: { url: `http://127.0.0.1:${port}`, received },
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections()
                server.close(() => done())
              })
          })
        )
      })
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ running }) => running))

/** Answer with a JSON error body and headers. */
export const error = (
  response: ServerResponse,
  status: number,
  message: string,
  headers: { readonly [name: string]: string } = {}
): void => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify({ type: "error", error: { type: "rate_limit_error", message } }))
}

/** Write an SSE body in small pieces (split mid-line, as TCP does); `end: false` leaves it open. */
export const writeSse = (response: ServerResponse, events: ReadonlyArray<string>, end = true): void => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const text = events.join("")
  for (let at = 0; at < text.length; at += 41) response.write(text.slice(at, at + 41))
  if (end) response.end()
}

// --- Anthropic messages events -------------------------------------------------------------------

const ev = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`

/** Anthropic stream events. */
export const anthropic = {
  start: ev("message_start", {
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
  }),
  text: (index: number, value: string) => [
    ev("content_block_start", { index, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index, delta: { type: "text_delta", text: value } }),
    ev("content_block_stop", { index })
  ],
  /** A text block that starts and gets one delta, and no stop (the stream is cut after it). */
  partialText: (index: number, value: string) => [
    ev("content_block_start", { index, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", { index, delta: { type: "text_delta", text: value } })
  ],
  toolUse: (index: number, id: string, name: string, json: string) => [
    ev("content_block_start", { index, content_block: { type: "tool_use", id, name, input: {} } }),
    ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json } }),
    ev("content_block_stop", { index })
  ],
  stop: (reason: string) => [
    ev("message_delta", { delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 20 } }),
    ev("message_stop", {})
  ]
} as const

// --- OpenAI chat completions chunks --------------------------------------------------------------

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", model: "gpt-test", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/** OpenAI chat-completions stream chunks. */
export const openai = {
  role: chunk({ role: "assistant", content: "" }),
  text: (value: string) => chunk({ content: value }),
  toolCall: (index: number, id: string, name: string, json: string) =>
    chunk({ tool_calls: [{ index, id, type: "function", function: { name, arguments: json } }] }),
  finish: (reason: string) => chunk({}, reason),
  usage: `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", model: "gpt-test", choices: [], usage: { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 } })}\n\n`,
  done: "data: [DONE]\n\n"
} as const

/** A whole answer in text, in either API. */
export const textAnswer = (api: Api, response: ServerResponse, value: string): void =>
  api === "anthropic"
    ? writeSse(response, [anthropic.start, ...anthropic.text(0, value), ...anthropic.stop("end_turn")])
    : writeSse(response, [openai.role, openai.text(value), openai.finish("stop"), openai.usage, openai.done])

/** The command-line arguments and environment that point the agent at a server. */
export const target = (api: Api, url: string) =>
  api === "anthropic"
    ? {
        args: ["--provider", "anthropic", "--model", "claude-test", "--base-url", url],
        env: { ANTHROPIC_API_KEY: keys.anthropic }
      }
    : {
        args: ["--provider", "openai", "--model", "gpt-test", "--base-url", `${url}/v1`],
        env: { OPENAI_API_KEY: keys.openai }
      }
