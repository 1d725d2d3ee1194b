/** A real HTTP server on 127.0.0.1 (random port) for provider contract tests (as in packages/providers/test), scoped to one test. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** A request as the server received it. */
export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** Answer the `n`-th request (1-based). */
export type Handler = (request: Received, response: ServerResponse, n: number) => void

export interface Running {
  readonly url: string
  readonly received: ReadonlyArray<Received>
}

/** Start a server for the scope; every open connection is closed when the scope ends. */
export const serve = (handler: Handler): Effect.Effect<Running, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly running: Running; readonly close: () => Promise<void> }>((resume) => {
      const received: Array<Received> = []
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const entry = {
            method: request.method ?? "",
            url: request.url ?? "",
            headers: request.headers,
            body: Buffer.concat(chunks).toString("utf8")
          }
          received.push(entry)
          handler(entry, response, received.length)
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

/** Write an SSE body in small pieces, split mid-line, as real servers' TCP chunks are. */
export const sse = (response: ServerResponse, events: ReadonlyArray<{ event?: string; data: string }>): void => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const text = events.map((e) => `${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${e.data}\n\n`).join("")
  for (let at = 0; at < text.length; at += 37) response.write(text.slice(at, at + 37))
  response.end()
}

/** Answer with a JSON body. */
export const json = (
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: { readonly [name: string]: string } = {}
): void => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(typeof body === "string" ? body : JSON.stringify(body))
}

/** Parse a JSON body, or undefined. */
export const parse = (body: string): unknown => {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}
