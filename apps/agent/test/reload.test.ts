// Issue 25 item 6: a reload mid-session switches the model, context window and output reserve. The
// reload is a `TurnPolicySet` in the log between the turns; renders before it use the first builder,
// renders after it the new one (its window and budget); every render rebuilds from the log; and the
// what-if pipeline (`ctxlog whatif`) reads the reload as the policy of the turns after it and replays
// the session under it. Also: `/reload` lines as the interactive loop reads them.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventLog, type WindowEvent } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import { Turn } from "@ctxlog/turn"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as Pipeline from "../../inspector/src/Pipeline.js"
import * as Agent from "../src/Agent.js"
import { parseReload } from "../src/Cli.js"
import * as Provider from "../src/Provider.js"
import * as Stack from "../src/Stack.js"
import * as Tools from "../src/Tools.js"
import * as Ui from "../src/Ui.js"
import { readStream, runCli, sessionOf, verifyLog } from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-reload-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Each turn: list the workspace, then answer (one count over both providers: call ids stay unique). */
let calls = 0
const script = () => {
  const n = calls++
  return n % 2 === 0
    ? { toolCalls: [{ name: "list_dir", input: { path: "." }, id: `call_${n}` }] }
    : { text: `Done with turn ${(n + 1) / 2}.` }
}

type Rendered = Extract<WindowEvent.WindowEvent, { readonly _tag: "PromptRendered" }>
const windowOf = (event: Rendered): unknown => event.render?.config.contextWindow

describe("reload", () => {
  it.live(
    "a mid-session reload to another model and window: the TurnPolicySet is in the log, later renders use the new builder, all rebuild, whatif replays it",
    () =>
      Effect.gen(function* () {
        const workspace = mkdtempSync(join(dir, "ws-"))
        writeFileSync(join(workspace, "a.txt"), "hello\n")
        const before = yield* Provider.make({
          provider: "offline",
          model: "offline-small",
          contextWindow: 8192,
          maxOutputTokens: 512,
          script
        })
        const after = yield* Provider.make({
          provider: "offline",
          model: "offline-large",
          contextWindow: 32_768,
          maxOutputTokens: 2048,
          script
        })
        const tools = Tools.make({ workspace })
        const stream = "reload-session"
        const ui = Ui.make({ quiet: true })
        const first: Agent.Config = { stream, provider: before, tools, ui }
        const second: Agent.Config = { stream, provider: after, tools, ui }
        const storage: Stack.Storage = { _tag: "sqlite", filename: join(dir, "log.db") }
        const envelopes = yield* Effect.gen(function* () {
          yield* Agent.open(first, { knowledge: [] })
          yield* Agent.turn(first, "Look around.")
          yield* Agent.turn(first, "Again.")
          const budget = yield* Agent.reload(second)
          assert.strictEqual(budget, Agent.budgetFor(second))
          assert.isAbove(budget, Agent.budgetFor(first))
          yield* Agent.turn(second, "And now with the large model.")
          yield* Agent.turn(second, "Once more.")
          const log = yield* EventLog.EventLog
          return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
        }).pipe(Effect.provide(Stack.layer(storage, Agent.budgetFor(first))))

        // The log: the first policy, then the reload between the second turn's end and the third turn.
        const policies = envelopes.flatMap((envelope, index) =>
          envelope.event._tag === "TurnPolicySet" ? [{ index, envelope }] : []
        )
        assert.strictEqual(policies.length, 2)
        const reloadAt = policies[1]?.index ?? -1
        assert.strictEqual(envelopes[reloadAt - 1]?.event._tag, "TurnCompleted")
        assert.strictEqual(envelopes[reloadAt]?.metadata?.actor, Turn.actors.reload)
        assert.deepStrictEqual(
          policies[1]?.envelope.event._tag === "TurnPolicySet" && policies[1].envelope.event.policy.target,
          {
            provider: "offline",
            model: "offline-large"
          }
        )

        // Renders before the reload use the small window, after it the large one.
        const renders = envelopes.flatMap((envelope) =>
          envelope.event._tag === "PromptRendered" ? [{ version: envelope.version, event: envelope.event }] : []
        )
        assert.strictEqual(renders.length, 8)
        const reloadVersion = envelopes[reloadAt]?.version ?? 0
        for (const { version, event } of renders) {
          const early = version < reloadVersion
          assert.strictEqual(event.model, early ? "offline-small" : "offline-large")
          assert.strictEqual(windowOf(event), early ? 8192 : 32_768)
        }
        const verified = RenderRecord.verifyAll(envelopes)
        assert.strictEqual(verified.renders, 8)
        assert.strictEqual(verified.verified, 8)
        assert.deepStrictEqual(
          verified.failures.map((failure) => failure.message),
          []
        )
        assert.deepStrictEqual(verified.overWindow, [])

        // The what-if pipeline: turns 3 and 4 carry the reloaded policy; the replay under the recorded
        // policies renders turns 1-2 with the small model and 3-4 with the large one, and rebuilds.
        const input = Pipeline.inputOf(envelopes)
        assert.strictEqual(input.turns.length, 4)
        assert.deepStrictEqual(
          input.turns.map((turn) => turn.policy?.target?.model),
          ["offline-small", undefined, "offline-large", undefined]
        )
        const replayed = yield* Pipeline.run("replay", input, (recorded) => recorded ?? Agent.policyFor(first))
        const models = replayed.flatMap((event) => (event._tag === "PromptRendered" ? [event.model] : []))
        assert.deepStrictEqual(models, [
          "offline-small",
          "offline-small",
          "offline-small",
          "offline-small",
          "offline-large",
          "offline-large",
          "offline-large",
          "offline-large"
        ])
        const replayedRenders = RenderRecord.verifyAll(replayed.map((event, index) => ({ event, version: index + 1 })))
        assert.strictEqual(replayedRenders.verified, 8)
        // Each replayed render carries the reminder its recorded render carried (the environment
        // snapshot of its turn), not the policy's preamble.
        const remindersOf = (events: ReadonlyArray<WindowEvent.WindowEvent>) =>
          events.flatMap((event) => (event._tag === "PromptRendered" ? [event.render?.turnReminder] : []))
        const recordedReminders = remindersOf(envelopes.map((envelope) => envelope.event))
        assert.include(recordedReminders[0] ?? "", "<environment date=")
        assert.deepStrictEqual(remindersOf(replayed), recordedReminders)
      }),
    60_000
  )

  it("/reload lines: flags replace the current options; another provider starts from its defaults; bad lines are typed errors", () => {
    const current: Provider.Options = { provider: "offline", model: "m", contextWindow: 16_384, maxOutputTokens: 1024 }
    assert.deepStrictEqual(
      parseReload("/reload --model big --context-window 32768", current),
      Either.right({
        ...current,
        model: "big",
        contextWindow: 32_768
      })
    )
    assert.deepStrictEqual(
      parseReload("/reload --provider ollama --max-output-tokens=2048", current),
      Either.right({
        provider: "ollama",
        maxOutputTokens: 2048
      })
    )
    const bad = (line: string) => {
      const parsed = parseReload(line, current)
      return Either.isLeft(parsed) ? parsed.left.message : "accepted"
    }
    assert.match(bad("/reload"), /^\/reload: \/reload: say what to change/)
    assert.match(bad("/reload --context-window 12k"), /--context-window: "12k" is not a positive integer/)
    assert.match(bad("/reload --model"), /--model: needs a value/)
    assert.match(bad("/reload --provider gemini"), /"gemini" is not one of offline, anthropic/)
    assert.match(bad("/reload --temperature 1"), /--temperature: is not a \/reload option/)
  })

  it.live(
    "/reload typed in run: a bad line changes nothing, a good one is recorded and the next turn renders with the new window; ctxlog verify passes",
    () =>
      Effect.gen(function* () {
        const ws = join(dir, "cli")
        mkdirSync(ws, { recursive: true })
        const db = join(dir, "cli.db")
        const ran = yield* Effect.promise(() =>
          runCli(["run", "--db", db, "--workspace", ws], {
            input:
              'hello\n/reload --context-window 12k\n/reload --model offline-big --context-window 32768\n/call list_dir {"path": "."}\n'
          })
        )
        assert.strictEqual(ran.code, 0, ran.stderr)
        assert.include(ran.stdout, '/reload: --context-window: "12k" is not a positive integer')
        assert.match(ran.stdout, /reloaded · offline\/offline-big · window 32768 \(reserve 1024, budget \d+\)/)
        const { envelopes } = yield* readStream(db, sessionOf(ran.stdout))
        const policies = envelopes.filter((envelope) => envelope.event._tag === "TurnPolicySet")
        assert.strictEqual(policies.length, 2)
        const windows = envelopes.flatMap((envelope) =>
          envelope.event._tag === "PromptRendered" ? [[envelope.event.model, windowOf(envelope.event)]] : []
        )
        assert.deepStrictEqual(windows, [
          ["offline-scripted", 16_384],
          ["offline-big", 32_768],
          ["offline-big", 32_768]
        ])
        const verified = RenderRecord.verifyAll(envelopes)
        assert.strictEqual(verified.verified, 3)
        const checked = yield* Effect.promise(() => verifyLog(db))
        assert.strictEqual(checked.code, 0, checked.stdout + checked.stderr)
      }),
    120_000
  )
})
