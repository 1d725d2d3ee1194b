/**
 * `ctxlog serve`: a local HTTP server with a JSON API over the {@link Queries} module and the viewer's
 * static bundle (built into `dist/ui` by `scripts/bundle-ui.mjs`; nothing is loaded from a CDN).
 *
 * API (all GET, JSON):
 * - `/api/streams` — stream summaries
 * - `/api/streams/:s/events` — the event lines (`?type=T`)
 * - `/api/streams/:s/window?at=N` — partitions, usage and blame at N
 * - `/api/streams/:s/diff?from=N&to=M` — the diff of two versions
 * - `/api/streams/:s/series` — tokens per partition over versions, and the budget
 * - `/api/streams/:s/render?at=N` — the render at or before N, rebuilt and verified
 * - `/api/streams/:s/head` — the current version (the viewer polls it to tail a running stream)
 *
 * @since 0.1.0
 */
import { existsSync, readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Inspect from "./Inspect.js"
import * as Queries from "./Queries.js"
import type { Source } from "./Source.js"

/** A running viewer. @since 0.1.0 */
export interface Running {
  readonly url: string
  readonly port: number
}

/** The viewer could not start. @since 0.1.0 */
export class ServeError extends Schema.TaggedError<ServeError>()("ServeError", { detail: Schema.String }) {
  override get message(): string {
    return this.detail
  }
}

/** Where the built viewer bundle lives (beside `dist/`, from the sources or the build). @since 0.1.0 */
export const uiDir = new URL("../dist/ui/", import.meta.url)

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ctxlog viewer</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/app.css"></head>
<body><div id="app"></div><script type="module" src="/app.js"></script></body></html>`

const statusOf = (error: { readonly _tag: string }) =>
  error._tag === "StreamNotFound" || error._tag === "RenderNotFound"
    ? 404
    : error._tag === "VersionOutOfRange"
      ? 400
      : 500

const api = (source: Source, path: ReadonlyArray<string>, query: URLSearchParams) =>
  Effect.gen(function* () {
    if (path.length === 0) {
      const infos = yield* source.streams()
      const out: Array<Queries.StreamSummary> = []
      for (const info of infos) {
        const entries = yield* Inspect.entries(source, info.stream, { types: Queries.summaryTypes })
        const { window } = yield* Inspect.windowAt(source, info.stream, info.version)
        out.push(Queries.summarize(info.stream, entries, window, info.updatedAt))
      }
      return out
    }
    const [stream = "", view = ""] = path
    const head = yield* Inspect.head(source, stream)
    const int = (name: string) => {
      const raw = query.get(name)
      return raw === null || raw === "" ? undefined : Number(raw)
    }
    switch (view) {
      case "head":
        return { version: head }
      case "events": {
        const types = query.getAll("type").filter((type) => type !== "")
        return Queries.eventLines(yield* Inspect.entries(source, stream, { types }))
      }
      case "window": {
        const at = yield* Inspect.resolveVersion(stream, head, int("at"))
        const { window, from } = yield* Inspect.windowAt(source, stream, at)
        const context = yield* Inspect.renderContext(source, stream, at)
        const entries = yield* Inspect.entries(source, stream, { to: at })
        return {
          window: Queries.partitions(window),
          usage: Queries.usage(window, context.budget, context.toolTokens),
          blame: Queries.blame(entries, at),
          foldedFrom: from
        }
      }
      case "diff": {
        const to = yield* Inspect.resolveVersion(stream, head, int("to"))
        const from = yield* Inspect.resolveVersion(stream, head, int("from") ?? Math.max(0, to - 1))
        const a = yield* Inspect.windowAt(source, stream, from)
        const b = yield* Inspect.windowAt(source, stream, to)
        return Queries.diff(a.window, b.window)
      }
      case "series": {
        const entries = yield* Inspect.entries(source, stream)
        const context = yield* Inspect.renderContext(source, stream, head)
        return { budget: context.budget, points: Queries.tokenSeries(entries) }
      }
      case "render": {
        const at = yield* Inspect.resolveVersion(stream, head, int("at"))
        return yield* Inspect.renderAt(source, stream, { at })
      }
      default:
        return yield* Effect.fail({ _tag: "NotFound", message: `no view "${view}"` })
    }
  })

const send = (response: ServerResponse, status: number, type: string, body: string | Buffer) => {
  response.writeHead(status, { "content-type": type, "cache-control": "no-store" })
  response.end(body)
}

const statics: Readonly<Record<string, string>> = {
  "/app.js": "text/javascript; charset=utf-8",
  "/app.css": "text/css; charset=utf-8"
}

/** Start the viewer on `host:port` (port 0 picks a free one); it stops when the scope closes. @since 0.1.0 */
export const start = (
  source: Source,
  options: { readonly port: number; readonly host: string }
): Effect.Effect<Running, ServeError, Scope.Scope> =>
  Effect.gen(function* () {
    if (!existsSync(new URL("app.js", uiDir))) {
      return yield* new ServeError({
        detail: `the viewer bundle is missing (${new URL("app.js", uiDir).pathname}): run \`pnpm --filter @ctxlog/inspector build\``
      })
    }
    const handle = (request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url ?? "/", "http://localhost")
      if (url.pathname === "/" || url.pathname === "/index.html")
        return send(response, 200, "text/html; charset=utf-8", page)
      const type = statics[url.pathname]
      if (type !== undefined) return send(response, 200, type, readFileSync(new URL(url.pathname.slice(1), uiDir)))
      if (!url.pathname.startsWith("/api/streams")) return send(response, 404, "text/plain", "not found")
      const path = url.pathname
        .slice("/api/streams".length)
        .split("/")
        .filter((part) => part !== "")
        .map(decodeURIComponent)
      Effect.runPromise(
        api(source, path, url.searchParams).pipe(
          Effect.match({
            onSuccess: (value) => send(response, 200, "application/json", JSON.stringify(value)),
            onFailure: (error) =>
              send(
                response,
                error._tag === "NotFound" ? 404 : statusOf(error),
                "application/json",
                JSON.stringify({ error: error.message })
              )
          })
        )
      ).catch((cause: unknown) => send(response, 500, "application/json", JSON.stringify({ error: String(cause) })))
    }
    const server = yield* Effect.acquireRelease(
      Effect.async<ReturnType<typeof createServer>, ServeError>((resume) => {
        const created = createServer(handle)
        created.once("error", (error) =>
          resume(Effect.fail(new ServeError({ detail: `cannot listen: ${error.message}` })))
        )
        created.listen(options.port, options.host, () => {
          resume(Effect.succeed(created))
        })
      }),
      (opened) =>
        Effect.async<void>((resume) => {
          opened.closeAllConnections()
          opened.close(() => resume(Effect.void))
        })
    )
    const address = server.address()
    const port = typeof address === "object" && address !== null ? (address satisfies AddressInfo).port : options.port
    return { url: `http://${options.host}:${port}/`, port }
  })
