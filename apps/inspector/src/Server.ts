/**
 * `ctxlog serve`: a local HTTP server with a JSON API over the {@link Queries} module and the viewer's
 * static bundle (built into `dist/ui` by `scripts/bundle-ui.mjs`; nothing is loaded from a CDN).
 *
 * API (all GET, JSON):
 * - `/api/streams` — stream summaries
 * - `/api/streams/:s/events` — the event lines (`?type=T`)
 * - `/api/streams/:s/window?at=N` — partitions, usage and blame at N
 * - `/api/streams/:s/message?at=N&id=M` — one message whole at N: parts, tokens, blame, tool pair
 * - `/api/streams/:s/diff?from=N&to=M` — the diff of two versions
 * - `/api/streams/:s/series` — tokens per partition over versions, the budget, the compaction budget and
 *   thresholds of the last recorded turn policy, compaction and seam marks, the tiers' decisions not to act
 * - `/api/streams/:s/search?q=text` — the events whose content holds the text
 * - `/api/streams/:s/render?at=N` — the render at or before N, rebuilt and verified
 * - `/api/streams/:s/head` — the current version (the viewer polls it to tail a running stream)
 * - `/api/streams/:s/cache` — per model call the cache model's uncached / cache-write / cache-read
 *   tokens and class, and the cause of each miss (what `ctxlog cache` prints)
 * - `/api/streams/:s/compare?policy=A&policy=B` — the stream replayed under two of the policies
 *   `ctxlog serve --policy` was given (`recorded`: the recording): per run each model call's tokens and
 *   cache split, the totals, and what each lost, at which call
 * - `/api/policies` — the names `compare` takes
 *
 * One write (POST, JSON body `{ "compaction": "<Compacted event id>" }`): `/api/streams/:s/restore` undoes
 * a compaction through {@link Restore.restore} — the path `ctxlog restore` takes — and answers the
 * `Restore.Restored`, or the typed refusal (404 no such compaction, 409 no longer in effect) with nothing
 * written. Only when the server was started with a `restore` target (`ctxlog serve` gives one unless
 * `--read-only`; without one a POST gets 405 like any other write); a cross-site page cannot post it: the `Origin` must be this server's, the body JSON
 * (which a form cannot send without a preflight this server never answers).
 *
 * Guarded against other origins (ADR 0038): a request whose `Host` is not a name the server serves
 * on gets 403 (DNS rebinding); a bind beyond loopback requires a token (printed in the URL, then kept
 * in a same-site cookie); no CORS headers; every response sets `X-Content-Type-Options: nosniff` and a
 * strict `Content-Security-Policy` (the page has no inline script and inserts content as text only).
 *
 * @since 0.1.0
 */
import { randomBytes, timingSafeEqual } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http"
import { type AddressInfo, isIP } from "node:net"
import { hostname } from "node:os"
import { CacheModel } from "@ctxlog/providers"
import { Policy } from "@ctxlog/turn"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as ContentSearch from "./ContentSearch.js"
import * as Inspect from "./Inspect.js"
import * as MessageDetail from "./MessageDetail.js"
import * as Queries from "./Queries.js"
import * as Restore from "./Restore.js"
import type { Source } from "./Source.js"
import * as Sweep from "./Sweep.js"

/** A running viewer. @since 0.1.0 */
export interface Running {
  /** The URL to open (with `?token=` when the bind is beyond loopback). */
  readonly url: string
  readonly port: number
  /** The token every request must carry, or null on a loopback bind. @since 0.4.0 */
  readonly token: string | null
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

/**
 * The headers of every response. The CSP allows only the served bundle and stylesheet and fetches to
 * the same origin: no inline script, no eval, no frames, no plugins, no images from anywhere.
 * Preact sets styles through the CSSOM, which `style-src 'self'` does not block.
 * @since 0.4.0
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store"
}

const statusOf = (error: { readonly _tag: string }) =>
  error._tag === "StreamNotFound" ||
  error._tag === "RenderNotFound" ||
  error._tag === "MessageNotFound" ||
  error._tag === "NotFound"
    ? 404
    : error._tag === "VersionOutOfRange" || error._tag === "BadRequest"
      ? 400
      : 500

/** The name `compare` takes for the recording itself. */
const recordedName = "recorded"

const api = (
  source: Source,
  path: ReadonlyArray<string>,
  query: URLSearchParams,
  policies: ReadonlyArray<Sweep.Candidate>
) =>
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
      case "message": {
        const id = query.get("id") ?? ""
        if (id === "") return yield* Effect.fail({ _tag: "BadRequest", message: "message needs ?id=<message id>" })
        const at = yield* Inspect.resolveVersion(stream, head, int("at"))
        const { window } = yield* Inspect.windowAt(source, stream, at)
        const entries = yield* Inspect.entries(source, stream, { to: at })
        const found = MessageDetail.detail(window, Queries.blame(entries, at), id, (message) =>
          Queries.preview(message)
        )
        return found instanceof MessageDetail.MessageNotFound ? yield* Effect.fail(found) : found
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
        const lines = Queries.eventLines(entries)
        const marks = lines
          .filter((line) => line.mark === "compaction" || line.mark === "seam")
          .map((line) => ({ version: line.version, mark: line.mark, type: line.type }))
        // The tiers' decisions not to act (ADR 0128): dots under the plot, the decision as the tooltip.
        const decisions = lines
          .filter((line) => line.mark === "decision")
          .map((line) => ({ version: line.version, summary: line.summary }))
        // The budget line: the context window of the last recorded render's builder config (its
        // `PromptRendered` render spec); without one (renders that are not rebuildable), the budget
        // the last `HistoryTrimmed` trimmed to; null when the log records neither.
        const trimmed = entries.findLast((entry) => entry.event._tag === "HistoryTrimmed")?.event
        const trimBudget = trimmed?._tag === "HistoryTrimmed" ? trimmed.budget : null
        // The compaction budget and thresholds: those of the last recorded turn policy (what the turn's
        // compaction compares the window against), or why there are none.
        const policyEntry = entries.findLast((entry) => entry.event._tag === "TurnPolicySet")
        const policyEvent = policyEntry?.event
        const policy = policyEvent?._tag === "TurnPolicySet" ? Policy.validate(policyEvent.policy) : undefined
        const thresholdLines =
          policy !== undefined && Either.isRight(policy) ? Policy.compactionThresholds(policy.right) : undefined
        const compaction =
          thresholdLines === undefined || policyEntry === undefined
            ? {
                none:
                  policy === undefined
                    ? "no turn policy recorded"
                    : Either.isLeft(policy)
                      ? `the recorded turn policy does not decode (${policy.left.message})`
                      : "compaction is off in the recorded turn policy"
              }
            : { ...thresholdLines, version: policyEntry.version }
        return {
          compaction,
          budget: context.budget ?? trimBudget,
          budgetSource: context.budget !== null ? "render spec" : trimBudget !== null ? "last HistoryTrimmed" : null,
          head,
          points: Queries.tokenSeries(entries),
          // `tokenSeries` has a point per render, or per event when the log records no render.
          pointsFrom: entries.some((entry) => entry.type === "PromptRendered") ? "renders" : "events",
          marks,
          decisions
        }
      }
      case "search": {
        const entries = yield* Inspect.entries(source, stream)
        return ContentSearch.search(entries, query.get("q") ?? "")
      }
      case "render": {
        const at = yield* Inspect.resolveVersion(stream, head, int("at"))
        return yield* Inspect.renderAt(source, stream, { at })
      }
      case "cache": {
        const report = CacheModel.predict(yield* Inspect.entries(source, stream))
        return {
          table: report.table,
          unknownPrefix: report.unknownPrefix,
          calls: report.calls.map((call) => ({
            version: call.version,
            at: call.at,
            model: `${call.provider}/${call.model}`,
            predicted: call.predicted,
            recorded: call.recorded,
            cause: call.cause
          })),
          causes: report.causes
        }
      }
      case "compare": {
        const names = query.getAll("policy")
        if (names.length !== 2) {
          return yield* Effect.fail({
            _tag: "BadRequest",
            message: `compare needs two ?policy= (of: ${[recordedName, ...policies.map((p) => p.name)].join(", ")})`
          })
        }
        const chosen: Array<Sweep.Candidate | null> = []
        for (const name of names) {
          const found = name === recordedName ? null : policies.find((candidate) => candidate.name === name)
          if (found === undefined) {
            return yield* Effect.fail({
              _tag: "BadRequest",
              message: `no policy "${name}" (of: ${[recordedName, ...policies.map((p) => p.name)].join(", ")})`
            })
          }
          chosen.push(found)
        }
        const entries = yield* Inspect.entries(source, stream)
        const candidates = chosen.flatMap((candidate) => (candidate === null ? [] : [candidate]))
        const result = yield* Sweep.sweepStream(stream, source.target, entries, candidates, Sweep.defaultPricer, {
          calls: true
        })
        let next = 0
        const runs = chosen.map((candidate) => (candidate === null ? result.recorded : result.candidates[next++]))
        return { stream, recorded: result.recorded, runs }
      }
      default:
        return yield* Effect.fail({ _tag: "NotFound", message: `no view "${view}"` })
    }
  })

const send = (
  response: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: OutgoingHttpHeaders = {}
) => {
  response.writeHead(status, { ...securityHeaders, "content-type": type, ...extra })
  response.end(body)
}

const statics: Readonly<Record<string, string>> = {
  "/app.js": "text/javascript; charset=utf-8",
  "/app.css": "text/css; charset=utf-8"
}

const wildcards: ReadonlySet<string> = new Set(["0.0.0.0", "::", "[::]", ""])

const restorePath = /^\/api\/streams\/([^/]+)\/restore$/
const RestoreBody = Schema.parseJson(Schema.Struct({ compaction: Schema.NonEmptyTrimmedString }))
const decodeRestoreBody = Schema.decodeUnknownEither(RestoreBody)
const json = (response: ServerResponse, status: number, value: unknown) =>
  send(response, status, "application/json", JSON.stringify(value))

/**
 * `POST /api/streams/:s/restore`: the viewer's Restore button, over {@link Restore.restore} (the CLI's one
 * path). Same-origin only (the `Origin` this server serves, `Sec-Fetch-Site` same-origin when sent), a JSON
 * body of at most 4 KB; a refusal is answered with its tag and message, and writes nothing.
 */
const restoreRequest = (
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  host: string,
  target: Restore.Target
) => {
  const match = restorePath.exec(url.pathname)
  if (match === null) return send(response, 404, "text/plain", "not found")
  const site = request.headers["sec-fetch-site"]
  if (request.headers.origin !== `http://${host}` || (site !== undefined && site !== "same-origin")) {
    return json(response, 403, { error: "forbidden: restore is accepted from this viewer's own page only" })
  }
  if (!(request.headers["content-type"] ?? "").startsWith("application/json")) {
    return json(response, 415, { error: 'restore takes a JSON body: {"compaction": "<Compacted event id>"}' })
  }
  let stream: string
  try {
    stream = decodeURIComponent(match[1] ?? "")
  } catch {
    return json(response, 400, { error: `bad percent-encoding in "${match[1]}"` })
  }
  const chunks: Array<Buffer> = []
  let size = 0
  request.on("data", (chunk: Buffer) => {
    size += chunk.length
    if (size <= 4096) chunks.push(chunk)
  })
  request.on("end", () => {
    if (size > 4096) return json(response, 413, { error: "the restore body is over 4 KB" })
    const body = decodeRestoreBody(Buffer.concat(chunks).toString("utf8"))
    if (Either.isLeft(body)) {
      return json(response, 400, {
        error: `restore takes {"compaction": "<Compacted event id>"}: ${body.left.message}`,
        tag: "BadRequest"
      })
    }
    Effect.runPromise(
      Restore.restoreIn(target, stream, body.right.compaction).pipe(
        Effect.match({
          onSuccess: (restored) => json(response, 200, restored),
          onFailure: (error) => {
            const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Error"
            const message =
              typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
            const status = tag === "CompactionNotFound" ? 404 : tag === "CompactionNotUndoable" ? 409 : 500
            return json(response, status, { error: message, tag })
          }
        })
      )
    ).catch((cause: unknown) => json(response, 500, { error: String(cause) }))
  })
}

/** Whether a bind address reaches only this machine. @since 0.4.0 */
export const isLoopback = (host: string): boolean => {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase()
  return bare === "localhost" || bare === "::1" || (isIP(bare) === 4 && bare.startsWith("127."))
}

/** A host as it appears in a URL and a `Host` header (IPv6 in brackets). */
const urlHost = (host: string) => (isIP(host) === 6 ? `[${host}]` : host.toLowerCase())

/**
 * The `Host` header values the server answers: the loopback names and addresses and the `--host`
 * given, each with the port (and bare on port 80). A wildcard bind answers any name, since the token
 * it requires is what keeps other origins out (a rebound page has no cookie and no token).
 * @since 0.4.0
 */
export const allowedHosts = (host: string, port: number): ReadonlySet<string> | "any" => {
  if (wildcards.has(host)) return "any"
  const names = ["localhost", "127.0.0.1", "[::1]", urlHost(host)]
  return new Set(names.flatMap((name) => (port === 80 ? [name, `${name}:${port}`] : [`${name}:${port}`])))
}

const cookieOf = (request: IncomingMessage, name: string): string | undefined => {
  for (const pair of (request.headers.cookie ?? "").split(";")) {
    const [key, ...value] = pair.trim().split("=")
    if (key === name) return value.join("=")
  }
  return undefined
}

const sameToken = (given: string | undefined, token: string) => {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * Start the viewer on `host:port` (port 0 picks a free one); it stops when the scope closes. A bind
 * beyond loopback requires a token: `options.token`, or 24 random bytes.
 * @since 0.1.0
 */
export const start = (
  source: Source,
  options: {
    readonly port: number
    readonly host: string
    readonly token?: string
    /** The candidate policies the viewer's compare control offers (besides the recording). @since 0.8.0 */
    readonly policies?: ReadonlyArray<Sweep.Candidate>
    /** Where the viewer's Restore button writes (`POST …/restore`); without it the viewer is read-only. @since 0.8.0 */
    readonly restore?: Restore.Target | undefined
  }
): Effect.Effect<Running, ServeError, Scope.Scope> =>
  Effect.gen(function* () {
    const policies = options.policies ?? []
    if (!existsSync(new URL("app.js", uiDir))) {
      return yield* new ServeError({
        detail: `the viewer bundle is missing (${new URL("app.js", uiDir).pathname}): run \`pnpm --filter @ctxlog/inspector build\``
      })
    }
    const token = isLoopback(options.host) ? null : (options.token ?? randomBytes(24).toString("base64url"))
    if (token !== null && token.length < 16) {
      return yield* new ServeError({ detail: `the token must be at least 16 characters (got ${token.length})` })
    }
    // Filled in once the port is known (port 0 picks one).
    let allowed: ReadonlySet<string> | "any" = new Set()
    let cookie = "ctxlog-token"
    const handle = (request: IncomingMessage, response: ServerResponse) => {
      const hostHeader = (request.headers.host ?? "").toLowerCase()
      if (allowed !== "any" && !allowed.has(hostHeader)) {
        return send(
          response,
          403,
          "text/plain; charset=utf-8",
          `forbidden: Host "${hostHeader}" is not one this viewer serves on (${[...allowed].join(", ")})\n`
        )
      }
      const url = new URL(request.url ?? "/", "http://localhost")
      const posting = request.method === "POST" && restorePath.test(url.pathname) && options.restore !== undefined
      if (request.method !== "GET" && request.method !== "HEAD" && !posting) {
        return send(response, 405, "text/plain; charset=utf-8", "only GET and HEAD\n", { allow: "GET, HEAD" })
      }
      if (token !== null) {
        const given = url.searchParams.get("token") ?? undefined
        const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]
        if (sameToken(given, token)) {
          // The page: keep the token in a same-site cookie and drop it from the address bar.
          if (url.pathname === "/" || url.pathname === "/index.html") {
            url.searchParams.delete("token")
            return send(response, 302, "text/plain; charset=utf-8", "", {
              location: `/${url.search}`,
              "set-cookie": `${cookie}=${token}; Path=/; HttpOnly; SameSite=Strict`
            })
          }
        } else if (!sameToken(cookieOf(request, cookie), token) && !sameToken(bearer, token)) {
          return send(
            response,
            403,
            "text/plain; charset=utf-8",
            "forbidden: this viewer requires its token; open the URL `ctxlog serve` printed (…/?token=…)\n"
          )
        }
      }
      if (posting && options.restore !== undefined) {
        return restoreRequest(request, response, url, hostHeader, options.restore)
      }
      if (url.pathname === "/" || url.pathname === "/index.html")
        return send(response, 200, "text/html; charset=utf-8", page)
      if (url.pathname === "/favicon.ico") return send(response, 204, "text/plain", "")
      const type = statics[url.pathname]
      if (type !== undefined) return send(response, 200, type, readFileSync(new URL(url.pathname.slice(1), uiDir)))
      if (url.pathname === "/api/policies") {
        return send(
          response,
          200,
          "application/json",
          JSON.stringify([recordedName, ...policies.map((candidate) => candidate.name)])
        )
      }
      if (!url.pathname.startsWith("/api/streams")) return send(response, 404, "text/plain", "not found")
      const parts = url.pathname
        .slice("/api/streams".length)
        .split("/")
        .filter((part) => part !== "")
      const path: Array<string> = []
      for (const part of parts) {
        try {
          path.push(decodeURIComponent(part))
        } catch {
          return send(response, 400, "application/json", JSON.stringify({ error: `bad percent-encoding in "${part}"` }))
        }
      }
      Effect.runPromise(
        api(source, path, url.searchParams, policies).pipe(
          Effect.match({
            onSuccess: (value) => send(response, 200, "application/json", JSON.stringify(value)),
            onFailure: (error) =>
              send(response, statusOf(error), "application/json", JSON.stringify({ error: error.message }))
          })
        )
      ).catch((cause: unknown) => send(response, 500, "application/json", JSON.stringify({ error: String(cause) })))
    }
    // A throw in a request listener would end the process (any page could then stop the viewer with
    // one bad URL): answer 400 instead.
    const guarded = (request: IncomingMessage, response: ServerResponse) => {
      try {
        handle(request, response)
      } catch (cause) {
        if (!response.headersSent) {
          send(
            response,
            400,
            "text/plain; charset=utf-8",
            `bad request: ${cause instanceof Error ? cause.message : String(cause)}\n`
          )
        }
      }
    }
    const server = yield* Effect.acquireRelease(
      Effect.async<ReturnType<typeof createServer>, ServeError>((resume) => {
        const created = createServer(guarded)
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
    allowed = allowedHosts(options.host, port)
    cookie = `ctxlog-token-${port}`
    const shown = wildcards.has(options.host) ? hostname() : urlHost(options.host)
    return { url: `http://${shown}:${port}/${token === null ? "" : `?token=${token}`}`, port, token }
  })
