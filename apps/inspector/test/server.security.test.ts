// The viewer's server against other origins, over plain HTTP on real sockets: a foreign `Host` gets
// 403 (DNS rebinding), a bind beyond loopback requires its token, no response carries CORS headers,
// every response carries nosniff and a strict CSP, and only GET and HEAD are served.
import { execFile } from "node:child_process"
import { request } from "node:http"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Server, Source } from "../src/index.js"
import { tempDir, importTranscript } from "./support/cli.js"

const temp = tempDir("ctxlog-viewer-security-")
const db = join(temp.dir, "log.db")
let scope: Scope.CloseableScope | undefined

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: string
}

/** One plain HTTP request to 127.0.0.1:port with exactly these headers. */
const fetchRaw = (
  port: number,
  path: string,
  headers: Readonly<Record<string, string>>,
  method = "GET"
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method, headers, setHost: false }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        body += chunk
      })
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }))
    })
    req.on("error", reject)
    req.end()
  })

const start = (host: string, token?: string) =>
  Effect.runPromise(
    Effect.flatMap(Source.sqlite(db), (source) =>
      Server.start(source, token === undefined ? { port: 0, host } : { port: 0, host, token })
    ).pipe(Scope.extend(scope ?? Effect.runSync(Scope.make())))
  )

const assertGuarded = (answer: Answer) => {
  assert.strictEqual(answer.headers["x-content-type-options"], "nosniff")
  const csp = String(answer.headers["content-security-policy"])
  assert.include(csp, "default-src 'none'")
  assert.include(csp, "script-src 'self'")
  assert.notInclude(csp, "unsafe-inline")
  assert.notInclude(csp, "unsafe-eval")
  for (const name of Object.keys(answer.headers)) assert.notMatch(name, /^access-control-/, `CORS header ${name}`)
}

beforeAll(async () => {
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [fileURLToPath(new URL("../scripts/bundle-ui.mjs", import.meta.url))], (error) =>
      error === null ? resolve() : reject(error)
    )
  })
  await importTranscript({ db, stream: "ctf", file: "01-sweagent-enigma-ctf-i-got-id.json" })
  scope = Effect.runSync(Scope.make())
}, 180_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  temp.cleanup()
})

describe("ctxlog serve against other origins", () => {
  it("a loopback bind answers its own names and refuses a foreign Host with 403 (DNS rebinding)", async () => {
    const running = await start("127.0.0.1")
    assert.isNull(running.token)
    assert.strictEqual(running.url, `http://127.0.0.1:${running.port}/`)
    for (const host of [`127.0.0.1:${running.port}`, `localhost:${running.port}`, `[::1]:${running.port}`]) {
      const answer = await fetchRaw(running.port, "/api/streams", { host, origin: "http://evil.example" })
      assert.strictEqual(answer.status, 200, host)
      assert.strictEqual(JSON.parse(answer.body)[0].stream, "ctf")
      assertGuarded(answer)
    }
    for (const host of ["evil.example", `evil.example:${running.port}`, "127.0.0.1:1", `127.0.0.2:${running.port}`]) {
      const answer = await fetchRaw(running.port, "/api/streams", { host })
      assert.strictEqual(answer.status, 403, `Host "${host}"`)
      assert.notInclude(answer.body, "ctf")
      assertGuarded(answer)
    }
    // Without a Host header Node refuses an HTTP/1.1 request itself (400), before the handler.
    const hostless = await fetchRaw(running.port, "/api/streams", {})
    assert.strictEqual(hostless.status, 400)
    assert.notInclude(hostless.body, "ctf")
    // The page and the bundle carry the same headers; the page has no inline script.
    const page = await fetchRaw(running.port, "/", { host: `127.0.0.1:${running.port}` })
    assert.strictEqual(page.status, 200)
    assertGuarded(page)
    assert.notMatch(page.body, /<script(?![^>]*\ssrc=)[^>]*>/)
    const bundle = await fetchRaw(running.port, "/app.js", { host: `localhost:${running.port}` })
    assert.strictEqual(bundle.status, 200)
    assertGuarded(bundle)
    // No preflight, no writes.
    for (const method of ["OPTIONS", "POST", "PUT", "DELETE"]) {
      const answer = await fetchRaw(
        running.port,
        "/api/streams",
        { host: `127.0.0.1:${running.port}`, origin: "http://evil.example" },
        method
      )
      assert.strictEqual(answer.status, 405, method)
      assertGuarded(answer)
    }
  })

  it("a malformed request gets 400 and the viewer keeps serving", async () => {
    const running = await start("127.0.0.1")
    const host = { host: `127.0.0.1:${running.port}` }
    const bad = await fetchRaw(running.port, "/api/streams/%E0%A4%A/head", host)
    assert.strictEqual(bad.status, 400)
    assertGuarded(bad)
    assert.strictEqual((await fetchRaw(running.port, "/api/streams", host)).status, 200)
  })

  it("the --host given is answered too", async () => {
    const running = await start("localhost")
    const answer = await fetchRaw(running.port, "/api/streams", { host: `localhost:${running.port}` })
    assert.strictEqual(answer.status, 200)
    assert.strictEqual((await fetchRaw(running.port, "/api/streams", { host: "evil.example" })).status, 403)
  })

  it("a bind beyond loopback requires the token printed in its URL and refuses requests without it", async () => {
    const running = await start("0.0.0.0")
    const token = running.token
    assert.isNotNull(token)
    if (token === null) return
    assert.isAtLeast(token.length, 32)
    assert.isTrue(running.url.endsWith(`:${running.port}/?token=${token}`), running.url)
    const host = { host: `192.0.2.10:${running.port}` }
    for (const path of ["/", "/app.js", "/api/streams", "/api/streams/ctf/window?at=3"]) {
      const answer = await fetchRaw(running.port, path, host)
      assert.strictEqual(answer.status, 403, path)
      assert.notInclude(answer.body, "ctf")
      assertGuarded(answer)
    }
    const wrong = await fetchRaw(running.port, `/api/streams?token=${"x".repeat(token.length)}`, host)
    assert.strictEqual(wrong.status, 403)
    assert.strictEqual((await fetchRaw(running.port, `/api/streams?token=${token}`, host)).status, 200)
    assert.strictEqual(
      (await fetchRaw(running.port, "/api/streams", { ...host, authorization: `Bearer ${token}` })).status,
      200
    )
    // Opening the printed URL sets a same-site cookie and drops the token from the address bar.
    const opened = await fetchRaw(running.port, `/?token=${token}&stream=ctf&v=3`, host)
    assert.strictEqual(opened.status, 302)
    assert.strictEqual(opened.headers.location, "/?stream=ctf&v=3")
    const cookie = String(opened.headers["set-cookie"]).split(";")[0] ?? ""
    assert.include(String(opened.headers["set-cookie"]), "HttpOnly")
    assert.include(String(opened.headers["set-cookie"]), "SameSite=Strict")
    const withCookie = await fetchRaw(running.port, "/api/streams", { ...host, cookie })
    assert.strictEqual(withCookie.status, 200)
    assertGuarded(withCookie)
  })

  it("a short token is refused at start", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.scoped(
        Effect.flatMap(Source.sqlite(db), (source) =>
          Server.start(source, { port: 0, host: "0.0.0.0", token: "short" })
        )
      )
    )
    assert.isTrue(Exit.isFailure(exit))
  })
})
