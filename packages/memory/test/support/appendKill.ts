import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  ContextService,
  EventHash,
  EventLog,
  Ids,
  Message,
  RecallSource,
  TokenCounter,
  Window,
  type WindowEvent
} from "@ctxlog/core"
import { assert, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { PostgresEventLog, SqliteEventLog } from "../../src/index.js"
import { runChild, runKilled } from "./kill.js"
import { postgresRawLayer, RawSql, sqliteRawLayer } from "./stores.js"

// The append kill test, on a SQLite file or a PostgreSQL database (see append.kill.test.ts and
// append.kill.postgres.test.ts). A process SIGKILLed at a random moment while it appends (through the
// window service, with snapshots) must leave a store that opens, whose hash chain verifies, that holds
// every acknowledged append and no part of a batch without the rest, whose snapshot-backed load equals a
// full replay, and that takes further appends. One store takes all the runs: each child reopens the
// store the previous one was killed on. The child acknowledges a batch on stdout only after its append
// returned.

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const runs = Number(process.env.CTXLOG_KILL_RUNS ?? 20)
const streams = ["kill-a", "kill-b"] as const

const isPostgres = (target: string) => target.startsWith("postgres")

const service = (target: string) =>
  ContextService.layer().pipe(
    Layer.provideMerge(
      isPostgres(target)
        ? PostgresEventLog.layer({ url: target, snapshotEvery: 7, maxConnections: 2 })
        : SqliteEventLog.layer({ filename: target, busyTimeoutMs: 30_000, snapshotEvery: 7 })
    ),
    Layer.provideMerge(isPostgres(target) ? postgresRawLayer(target) : sqliteRawLayer(target)),
    Layer.provide(Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerUuidV7, RecallSource.layerEmpty))
  )

/** A batch id (`<stream>:<batch>`) and the parts of one message id `<stream>:<batch>:<index>/<size>`. */
const parseId = (id: string) => {
  const match = /^(kill-[ab]:[^:]+):(\d+)\/(\d+)$/.exec(id)
  return match === null ? undefined : { batch: match[1] ?? "", index: Number(match[2]), size: Number(match[3]) }
}

/** What one check of the reopened file found. */
interface Check {
  readonly lost: ReadonlyArray<string>
  readonly torn: ReadonlyArray<string>
  readonly present: ReadonlySet<string>
}

/** Reopen the file, check every promise, then append one more batch per stream (acknowledged). */
const checkAndAppend = (target: string, run: number, acknowledged: Map<string, number>) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    const ctx = yield* ContextService.ContextService
    const raw = yield* RawSql
    if (raw.dialect === "sqlite") {
      const integrity = yield* raw.rows("pragma integrity_check")
      assert.deepStrictEqual(integrity, [{ integrity_check: "ok" }], `run ${run}: integrity_check`)
    }
    const infos = yield* log.streams()
    const torn: Array<string> = []
    const present = new Set<string>()
    for (const stream of streams) {
      const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
      // Versions 1..n without a gap, the chain verifies, and the streams row agrees.
      assert.deepStrictEqual(
        envelopes.map((envelope) => envelope.version),
        envelopes.map((_, index) => index + 1),
        `run ${run}: ${stream} versions`
      )
      const chain = EventHash.verify(envelopes)
      assert.isTrue(chain.ok, `run ${run}: ${stream} chain ${JSON.stringify(chain)}`)
      assert.strictEqual(yield* log.version(stream), envelopes.length)
      assert.strictEqual(infos.find((info) => info.stream === stream)?.version ?? 0, envelopes.length)
      // Every batch is whole, its messages at consecutive versions.
      const batches = new Map<string, Array<{ index: number; size: number; version: number }>>()
      for (const envelope of envelopes) {
        assert.strictEqual(envelope.event._tag, "MessageAppended", `run ${run}: ${stream} v${envelope.version}`)
        if (envelope.event._tag !== "MessageAppended") continue
        const parsed = parseId(envelope.event.message.id)
        assert.isDefined(parsed, `run ${run}: unexpected message id ${envelope.event.message.id}`)
        if (parsed === undefined) continue
        const parts = batches.get(parsed.batch) ?? []
        parts.push({ index: parsed.index, size: parsed.size, version: envelope.version })
        batches.set(parsed.batch, parts)
      }
      for (const [batch, parts] of batches) {
        present.add(batch)
        const whole =
          parts.length === parts[0]?.size &&
          parts.every((part, i) => part.index === i && part.version === (parts[0]?.version ?? 0) + i)
        if (!whole) torn.push(batch)
      }
      // The snapshot-backed load equals a full replay of the events.
      const loaded = yield* ctx.load(stream)
      const replayed = Window.replay(envelopes.map((envelope) => envelope.event))
      assert.deepStrictEqual(yield* Window.encode(loaded), yield* Window.encode(replayed), `run ${run}: ${stream} load`)
    }
    const lost = [...acknowledged.keys()].filter((batch) => !present.has(batch))
    // The stream takes further appends.
    for (const stream of streams) {
      const batch = `${stream}:p${run}`
      yield* ctx.run(stream, () =>
        Either.right<ReadonlyArray<WindowEvent.Draft>>([
          {
            _tag: "MessageAppended",
            message: {
              id: `${batch}:0/1`,
              role: "user",
              kind: "chat",
              parts: [Message.text("after the kill")],
              tokens: 3
            }
          }
        ])
      )
      acknowledged.set(batch, 1)
    }
    return { lost, torn, present } satisfies Check
  }).pipe(Effect.provide(service(target)))

/** The test: `target` makes the store (a SQLite file name or a PostgreSQL database URL). */
export const appendKillTest = <E>(label: string, makeTarget: Effect.Effect<string, E>): void =>
  it.live(
    `${label}: a process killed at a random moment of its appends loses no acknowledged event and tears no batch (${runs} runs)`,
    () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        const acknowledged = new Map<string, number>()
        const record = (lines: ReadonlyArray<string>) => {
          let inFlight: string | undefined
          for (const line of lines) {
            const [word, stream, batch] = line.split(" ")
            if (word === "begin") inFlight = `${stream}:${batch}`
            if (word === "ack") {
              acknowledged.set(`${stream}:${batch}`, 1)
              inFlight = undefined
            }
          }
          return inFlight
        }
        // How long 40 batches take here: kill points are drawn from that span.
        const calibration = yield* runChild(
          packageDir,
          join("test", "child", "appendLoop.ts"),
          [target, "0", "40"],
          undefined
        )
        assert.isTrue(calibration.finished)
        record(calibration.lines)
        const span = Math.max(20, calibration.readyToExitMs)
        const checks = yield* runKilled(
          packageDir,
          join("test", "child", "appendLoop.ts"),
          runs,
          (run) => [target, String((run + 1) * 100_000), "0"],
          () => Math.random() * span,
          (run, child) =>
            Effect.gen(function* () {
              const inFlight = record(child.lines)
              const check = yield* checkAndAppend(target, run, acknowledged)
              assert.deepStrictEqual(check.torn, [], `run ${run}: torn batches`)
              assert.deepStrictEqual(check.lost, [], `run ${run}: acknowledged batches lost`)
              return {
                lost: check.lost.length,
                inFlight,
                committed: inFlight !== undefined && check.present.has(inFlight)
              }
            })
        )
        const killedMidAppend = checks.filter((check) => check.inFlight !== undefined).length
        const inFlightCommitted = checks.filter((check) => check.committed).length
        const lostTotal = checks.reduce((sum, check) => sum + check.lost, 0)
        console.log(
          `append kills (${label}): ${runs} runs, ${killedMidAppend} mid-append (${inFlightCommitted} of those committed before the kill), ${acknowledged.size} acknowledged batches, ${lostTotal} lost`
        )
        // The kills did land inside appends (otherwise this test proves nothing).
        assert.isAbove(killedMidAppend, 0)
      }),
    600_000
  )
