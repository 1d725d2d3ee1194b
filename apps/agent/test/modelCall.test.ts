// The agent's model call against strict local Anthropic and OpenAI servers (test/support/server.ts):
// how each failure ends — a 429 with a long and a short retry-after, a stream that ends cleanly before
// its final event, a tool call cut by max_tokens, a 400, a window below the output reserve — printed
// once, and `ctxlog verify` holding on the log after each.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Message } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ModelCall from "../src/ModelCall.js"
import { linesOf, readStream, runCli, sessionOf, verifyLog } from "./support/cli.js"
import {
  type Answer,
  type Api,
  anthropic,
  error,
  openai,
  serveApi,
  target,
  textAnswer,
  writeSse
} from "./support/server.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-modelcall-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let cases = 0
/** A fresh workspace and database for one case. */
const fresh = () => {
  const root = join(dir, `case-${++cases}`)
  const ws = join(root, "ws")
  mkdirSync(ws, { recursive: true })
  return { ws, db: join(root, "agent.db") }
}

/** Run one task against a server; the server's requests, the run's output, the log's verify. */
const runAgainst = (api: Api, answer: Answer, extra: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const server = yield* serveApi(api, answer)
    const { ws, db } = fresh()
    const to = target(api, server.url)
    const ran = yield* Effect.promise(() =>
      runCli(["run", ...to.args, ...extra, "--workspace", ws, "--db", db, "--task", "Write big.txt"], { env: to.env })
    )
    // The agent never sent a request the API would refuse as malformed.
    assert.deepStrictEqual(
      server.received.flatMap((request) => (request.refused === undefined ? [] : [request.refused])),
      []
    )
    return { server, ran, ws, db }
  })

/** `ctxlog verify` holds on the log the run left (when it left one). */
const verified = (db: string) =>
  Effect.gen(function* () {
    if (!existsSync(db)) return
    const check = yield* Effect.promise(() => verifyLog(db))
    assert.strictEqual(check.code, 0, `${check.stdout}\n${check.stderr}`)
    assert.match(check.stdout, /^ok\s/m)
  })

const apis = ["anthropic", "openai"] as const

describe("the agent's model call against strict local servers", () => {
  for (const api of apis) {
    it.scopedLive(`${api}: a 429 asking to wait 120 s gives up at once, saying how long, printed once`, () =>
      Effect.gen(function* () {
        const { server, ran, db } = yield* runAgainst(api, (response) =>
          error(response, 429, "slow down", { "retry-after": "120" })
        )
        assert.strictEqual(ran.code, 1)
        // One request: neither the HTTP client nor the agent sent it again within the 2 minutes.
        assert.strictEqual(server.received.length, 1)
        const lines = linesOf(ran.stderr)
        assert.strictEqual(lines.length, 2, ran.stderr)
        assert.match(lines[0] ?? "", /^ctxlog-agent: .*rate_limited \(HTTP 429\): slow down\. /)
        assert.include(lines[0] ?? "", "asked to wait 2 min")
        assert.include(lines[0] ?? "", "gives up")
        assert.match(lines[1] ?? "", /^resume with: .* run --session \S+ --db /)
        assert.notInclude(ran.stdout, "slow down")
        assert.notInclude(ran.stdout, "retrying")
        yield* verified(db)
      })
    )
  }

  it.scopedLive("a 429 asking to wait 1 s is waited for once, by the HTTP client alone, and the turn completes", () =>
    Effect.gen(function* () {
      const { server, ran, db } = yield* runAgainst("anthropic", (response, n) =>
        n === 1
          ? error(response, 429, "slow down", { "retry-after": "1" })
          : textAnswer("anthropic", response, "Hello after the wait.")
      )
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(server.received.length, 2)
      assert.strictEqual(server.received[0]?.body, server.received[1]?.body)
      assert.include(ran.stdout, "Hello after the wait.")
      assert.strictEqual(ran.stderr, "")
      const { window } = yield* readStream(db, sessionOf(ran.stdout))
      assert.strictEqual(Message.textOf(window.history.at(-1) ?? { parts: [] }), "Hello after the wait.")
      yield* verified(db)
    })
  )

  for (const api of apis) {
    it.scopedLive(`${api}: a stream that ends cleanly before its final event is retried, the answer restarting`, () =>
      Effect.gen(function* () {
        const { server, ran, db } = yield* runAgainst(api, (response, n) => {
          if (n > 1) return textAnswer(api, response, "The whole answer.")
          // A clean end (no reset) right after the first words: no message_stop, no finish_reason.
          return api === "anthropic"
            ? writeSse(response, [anthropic.start, ...anthropic.partialText(0, "Half an ans")])
            : writeSse(response, [openai.role, openai.text("Half an ans")])
        })
        assert.strictEqual(ran.code, 0, ran.stderr)
        assert.strictEqual(server.received.length, 2)
        // The partial answer stays once, a marker says the answer restarts, the answer comes once.
        assert.strictEqual(ran.stdout.split("Half an ans").length, 2)
        assert.strictEqual(ran.stdout.split("The whole answer.").length, 2)
        const marker = ran.stdout.indexOf("the answer restarts below")
        assert.isAbove(marker, ran.stdout.indexOf("Half an ans"))
        assert.isBelow(marker, ran.stdout.indexOf("The whole answer."))
        const { envelopes, window } = yield* readStream(db, sessionOf(ran.stdout))
        assert.strictEqual(Message.textOf(window.history.at(-1) ?? { parts: [] }), "The whole answer.")
        // Nothing of the broken attempt is in the log: one render, one answer.
        assert.strictEqual(envelopes.filter((e) => e.type === "PromptRendered").length, 1)
        assert.strictEqual(window.history.filter((m) => m.role === "assistant").length, 1)
        yield* verified(db)
      })
    )
  }

  it.scopedLive("a stream that keeps ending early is tried three times; the last failure gives up, printed once", () =>
    Effect.gen(function* () {
      const { server, ran, db } = yield* runAgainst("anthropic", (response) =>
        writeSse(response, [anthropic.start, ...anthropic.partialText(0, "Half an ans")])
      )
      assert.strictEqual(ran.code, 1)
      assert.strictEqual(server.received.length, ModelCall.attemptsOfBrokenStream)
      // A notice for each retry, none for the last failure.
      assert.strictEqual(ran.stdout.split("retrying").length - 1, ModelCall.attemptsOfBrokenStream - 1)
      const lines = linesOf(ran.stderr)
      assert.strictEqual(lines.length, 2, ran.stderr)
      assert.include(lines[0] ?? "", `Giving up after ${ModelCall.attemptsOfBrokenStream} attempts`)
      assert.notInclude(ran.stdout, "Giving up")
      yield* verified(db)
    })
  )

  for (const api of apis) {
    it.scopedLive(`${api}: a tool call cut by max_tokens is answered with an error result and the text is kept`, () =>
      Effect.gen(function* () {
        const cut = '{"path":"big.txt","content":"aaaaaaaaaaaaaaaa'
        const { server, ran, ws, db } = yield* runAgainst(api, (response, n) => {
          if (n > 1) return textAnswer(api, response, "The file is too large for one call; I will write it in parts.")
          return api === "anthropic"
            ? writeSse(response, [
                anthropic.start,
                ...anthropic.text(0, "I will write the file now."),
                ...anthropic.toolUse(1, "toolu_big", "write_file", cut),
                ...anthropic.stop("max_tokens")
              ])
            : writeSse(response, [
                openai.role,
                openai.text("I will write the file now."),
                openai.toolCall(0, "call_big", "write_file", cut),
                openai.finish("length"),
                openai.usage,
                openai.done
              ])
        })
        assert.strictEqual(ran.code, 0, ran.stderr)
        assert.strictEqual(server.received.length, 2)
        assert.isFalse(existsSync(join(ws, "big.txt")), "the cut call did not run")
        // The model is told, in the next request, why its call did not run.
        assert.include(server.received[1]?.body ?? "", "cut off at the output limit")
        const { window } = yield* readStream(db, sessionOf(ran.stdout))
        const assistant = window.history.filter((m) => m.role === "assistant")
        assert.strictEqual(Message.textOf(assistant[0] ?? { parts: [] }), "I will write the file now.")
        const calls = Message.toolCallsOf(assistant[0] ?? { parts: [] })
        assert.strictEqual(calls.length, 1)
        assert.isTrue(ModelCall.isCut(calls[0]?.input ?? null))
        const results = window.history.flatMap((m) => Message.toolResultsOf(m))
        assert.strictEqual(results.length, 1)
        assert.isTrue(results[0]?.isError)
        assert.include(results[0]?.content ?? "", ModelCall.cutMessage)
        assert.strictEqual(
          Message.textOf(window.history.at(-1) ?? { parts: [] }),
          "The file is too large for one call; I will write it in parts."
        )
        yield* verified(db)
      })
    )
  }

  it.scopedLive("a 400 is printed once, on stderr, and the run gives up", () =>
    Effect.gen(function* () {
      const { server, ran, db } = yield* runAgainst("openai", (response) => {
        response.writeHead(400, { "content-type": "application/json" })
        response.end(JSON.stringify({ error: { type: "invalid_request_error", message: "model gpt-test is retired" } }))
      })
      assert.strictEqual(ran.code, 1)
      assert.strictEqual(server.received.length, 1)
      assert.strictEqual(ran.stderr.split("model gpt-test is retired").length, 2, ran.stderr)
      assert.notInclude(ran.stdout, "model gpt-test is retired")
      const lines = linesOf(ran.stderr)
      assert.strictEqual(lines.length, 2)
      assert.include(lines[0] ?? "", "Giving up")
      yield* verified(db)
    })
  )

  it.scopedLive("a window below the output reserve is one sentence naming both flags; nothing is sent or written", () =>
    Effect.gen(function* () {
      const { server, ran, db } = yield* runAgainst(
        "anthropic",
        (response) => textAnswer("anthropic", response, "unreachable"),
        ["--context-window", "4000"]
      )
      assert.strictEqual(ran.code, 1)
      const lines = linesOf(ran.stderr)
      assert.strictEqual(lines.length, 1, ran.stderr)
      assert.match(lines[0] ?? "", /^ctxlog-agent: --context-window 4000 is too small: .*--max-output-tokens 4096/)
      assert.notInclude(ran.stderr, "thresholds")
      assert.strictEqual(server.received.length, 0)
      assert.isFalse(existsSync(db))
      yield* verified(db)
    })
  )
})
