// Issue 25 item 2 through the agent loop (Agent.turn → Turn.complete): a 200 KB tool output is stored
// in the file store of the log's database; the `MessageAppended` event holds the preview with the
// handle, not the 200 KB; the agent's `read_output` returns it whole (its own result stays inline);
// every render rebuilds; `FileStore.verify` finds nothing wrong; erasure removes the stored output.
// On a SQLite file and on PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService, EventLog, type LanguageModel, Message } from "@ctxlog/core"
import { Erasure, FileStore } from "@ctxlog/memory"
import { RenderRecord } from "@ctxlog/providers"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Agent from "../src/Agent.js"
import * as Provider from "../src/Provider.js"
import * as Stack from "../src/Stack.js"
import * as Tools from "../src/Tools.js"
import * as Ui from "../src/Ui.js"
import { verifyLog } from "./support/cli.js"
import { freshDatabase } from "./support/postgres.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-filestore-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const output = Array.from({ length: 5000 }, (_, i) => `src/file${i}.ts:${i}: const value${i} = ${i}`).join("\n")

/** The newest tool result the model was sent. */
const lastResult = (request: LanguageModel.ModelRequest): string => {
  for (const message of [...request.messages].reverse()) {
    const result = Message.toolResultsOf(message).at(-1)
    if (result !== undefined) return result.content
  }
  return ""
}

/** Read the big file; then read the stored output back by the id its preview names; then a range. */
const script = () => {
  let calls = 0
  const id = (request: LanguageModel.ModelRequest) =>
    /\[stored output id=([0-9a-f]{16}),/.exec(lastResult(request))?.[1]
  const call = (name: string, input: Message.JsonValue) => ({ toolCalls: [{ name, input, id: `c${++calls}` }] })
  return (request: LanguageModel.ModelRequest, n: number) => {
    if (n === 0) return call("read_file", { path: "big.txt" })
    if (n === 1) return call("read_output", { id: id(request) ?? "none" })
    if (n === 2) return call("read_output", { id: "none", start: 1, end: 2 })
    return { text: "Read it." }
  }
}

const stores: ReadonlyArray<{ readonly name: string; readonly storage: Effect.Effect<Stack.Storage> }> = [
  { name: "SQLite file", storage: Effect.sync(() => ({ _tag: "sqlite", filename: join(dir, "log.db") })) },
  { name: "PostgreSQL", storage: Effect.map(freshDatabase, (url) => ({ _tag: "postgres", url })) }
]

for (const store of stores) {
  describe(`the agent's file store on ${store.name}`, () => {
    it.live(
      "a 200 KB tool output: the event holds the handle, read_output returns it whole, renders rebuild, erasure removes it",
      () =>
        Effect.gen(function* () {
          assert.isAbove(output.length, 200_000)
          const workspace = mkdtempSync(join(dir, "ws-"))
          writeFileSync(join(workspace, "big.txt"), output)
          const provider = yield* Provider.make({
            provider: "offline",
            model: "offline-files",
            contextWindow: 16_384,
            maxOutputTokens: 1024,
            script: script()
          })
          const storage = yield* store.storage
          const stream = `files-${store.name.startsWith("SQLite") ? "sqlite" : "pg"}`
          const budget = Agent.budgetFor({ provider, tools: Tools.make({ workspace, readOutput: Agent.noReader }) })
          yield* Effect.gen(function* () {
            const files = yield* FileStore.FileStore
            const tools = Tools.make({ workspace, readOutput: Tools.readOutputFrom(files, stream) })
            const config: Agent.Config = { stream, provider, tools, ui: Ui.make({ quiet: true }) }
            assert.deepStrictEqual(Agent.policyFor(config).fileStore, Agent.fileStore)
            yield* Agent.open(config, { knowledge: [] })
            const report = yield* Agent.turn(config, "Read big.txt.")
            assert.strictEqual(report.modelCalls, 4)

            const log = yield* EventLog.EventLog
            const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
            const results = envelopes.flatMap((envelope) =>
              envelope.event._tag === "MessageAppended" ? Message.toolResultsOf(envelope.event.message) : []
            )
            assert.strictEqual(results.length, 3)
            const [stored, readBack, range] = results
            if (stored === undefined || readBack === undefined || range === undefined) return assert.fail("results")
            // The event holds the preview and the handle, not the output.
            const handle = FileStore.handleOf(stored)
            if (handle === undefined) return assert.fail(`no handle in ${stored.content.slice(0, 200)}`)
            assert.deepStrictEqual(handle, {
              sha256: FileStore.sha256Of(output),
              bytes: Buffer.byteLength(output),
              lines: 5000,
              tokens: handle.tokens
            })
            assert.isBelow(stored.content.length, Agent.fileStore.previewChars + 600)
            assert.isTrue(output.startsWith(stored.content.split("\n")[1] ?? "-"), "the preview shows the head")
            for (const envelope of envelopes) {
              assert.isBelow(JSON.stringify(envelope.event).length, 60_000, `event ${envelope.version} is small`)
            }
            // read_output's own result is not stored again (kept inline, cut to the provider's limit).
            assert.isUndefined(FileStore.handleOf(readBack))
            assert.isTrue(output.startsWith(readBack.content.slice(0, 1000)))
            // An unknown id is an error result for the model, not a failed turn.
            assert.isTrue(range.isError === true)
            // The agent's read tool returns the whole output, byte for byte, and by lines.
            const id = FileStore.shortId(handle.sha256)
            assert.deepStrictEqual(yield* tools.run("read_output", { id }), { content: output, isError: false })
            assert.strictEqual(
              (yield* tools.run("read_output", { id, start: 5000, end: 5000 })).content,
              "[lines 5000-5000 of 5000]\nsrc/file4999.ts:4999: const value4999 = 4999"
            )
            // Every render rebuilds from the log; the stored output verifies against its hash.
            const renders = RenderRecord.verifyAll(envelopes)
            assert.strictEqual(renders.renders, 4)
            assert.strictEqual(renders.verified, renders.renders)
            assert.deepStrictEqual(
              renders.failures.map((failure) => failure.message),
              []
            )
            const window = yield* (yield* ContextService.ContextService).load(stream)
            assert.deepStrictEqual(yield* files.verify(stream, FileStore.referencedIn(window.history)), [])
            assert.strictEqual((yield* files.list(stream)).length, 1)
            // `ctxlog verify` (the inspector, another process) passes on the log holding the handle. (It
            // checks events, chain and snapshots; the stored outputs are checked by FileStore.verify above.)
            if (storage._tag === "sqlite") {
              const checked = yield* Effect.promise(() => verifyLog(storage.filename))
              assert.strictEqual(checked.code, 0, checked.stdout + checked.stderr)
            }
            // Erasure removes it.
            yield* Erasure.erase(stream, { actor: "test", reason: "issue 25 acceptance" })
            assert.deepStrictEqual(yield* files.list(stream), [])
            assert.isTrue((yield* tools.run("read_output", { id })).isError)
          }).pipe(Effect.provide(Stack.layer(storage, budget)))
        }),
      60_000
    )
  })
}
