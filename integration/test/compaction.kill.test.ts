// SIGKILL at random moments while a process appends and compacts one stream of a SQLite file, and of a
// PostgreSQL database (tiered compaction with the template compactor, snapshots every few events). One
// store takes all the runs of a backend: each child reopens the store the previous one was killed on.
// After each kill the store must open (a SQLite file must pass integrity_check), the chain must verify, every acknowledged message and compaction must be in the
// log, each compaction must have fully happened or not at all (no message left the window without a
// summary that replaced it, no tool call without its result), the snapshot-backed load must equal a full
// replay, and the stream must take further appends and a further compaction.
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  ContextService,
  EventHash,
  EventLog,
  Ids,
  RecallSource,
  TokenCounter,
  ToolPairs,
  Window,
  type WindowEvent
} from "@ctxlog/core"
import { TieredCompaction } from "@ctxlog/compaction"
import { PostgresEventLog, SqliteEventLog } from "@ctxlog/memory"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { runChild, runKilled } from "../../packages/memory/test/support/kill.js"
import { freshDatabase } from "../../packages/memory/test/support/postgres.js"
import type {} from "../../packages/memory/test/support/postgresServer.js"
import { postgresRawLayer, RawSql, sqliteRawLayer, tempFile } from "../../packages/memory/test/support/stores.js"
import { countingCompactor, exchange } from "./support/session.js"

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const runs = Number(process.env.CTXLOG_KILL_RUNS ?? 20)
const stream = "conv"
const child = join("test", "child", "compactLoop.ts")

/** A target is a SQLite file name or a PostgreSQL database URL. */
const isPostgres = (target: string) => target.startsWith("postgres")

const layer = (target: string) =>
  Layer.mergeAll(ContextService.layer(), countingCompactor).pipe(
    Layer.provideMerge(
      isPostgres(target)
        ? PostgresEventLog.layer({ url: target, snapshotEvery: 5, maxConnections: 2 })
        : SqliteEventLog.layer({ filename: target, busyTimeoutMs: 30_000, snapshotEvery: 5 })
    ),
    Layer.provideMerge(isPostgres(target) ? postgresRawLayer(target) : sqliteRawLayer(target)),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerHeuristic(4), Ids.layerUuidV7, RecallSource.layerEmpty))
  )

/** What the children acknowledged, over all runs. */
interface Acknowledged {
  readonly messages: Set<string>
  compactions: number
}

/**
 * Read a child's lines into `acked`. Returns the version at which the compaction in flight at the kill
 * began (if any) and whether one of its tiers had started (it was about to write or writing).
 */
const record = (
  lines: ReadonlyArray<string>,
  acked: Acknowledged
): { readonly inCompaction: number | undefined; readonly tierStarted: boolean } => {
  let inCompaction: number | undefined
  let tierStarted = false
  for (const line of lines) {
    const [word, second, third] = line.split(" ")
    if (word === "ack") for (const id of (third ?? "").split(",")) if (id !== "") acked.messages.add(id)
    if (word === "compact-begin") {
      inCompaction = Number(second)
      tierStarted = false
    }
    if (word === "tier") tierStarted = true
    if (word === "compact-end") {
      inCompaction = undefined
      tierStarted = false
      if (second === "Compacted") acked.compactions++
    }
  }
  return { inCompaction, tierStarted: inCompaction !== undefined && tierStarted }
}

/** Twice the mean time of a compaction that wrote (at least 5 ms), from a child's own clock. */
const compactionSpan = (lines: ReadonlyArray<string>): number => {
  const durations: Array<number> = []
  let began: number | undefined
  for (const line of lines) {
    const words = line.split(" ")
    if (words[0] === "compact-begin") began = Number(words[2])
    if (words[0] === "compact-end" && began !== undefined) {
      if (words[1] !== "NoChange") durations.push(Number(words[3]) - began)
      began = undefined
    }
  }
  const mean = durations.reduce((sum, ms) => sum + ms, 0) / Math.max(1, durations.length)
  return Math.max(5, 2 * mean)
}

/** Reopen the store and check every promise; then append an exchange and compact once more (acknowledged). */
const checkAndContinue = (target: string, run: number, acked: Acknowledged, inCompaction: number | undefined) =>
  Effect.gen(function* () {
    const at = `run ${run}`
    const log = yield* EventLog.EventLog
    const ctx = yield* ContextService.ContextService
    const raw = yield* RawSql
    if (raw.dialect === "sqlite") {
      assert.deepStrictEqual(yield* raw.rows("pragma integrity_check"), [{ integrity_check: "ok" }], at)
    }
    const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    assert.deepStrictEqual(
      envelopes.map((envelope) => envelope.version),
      envelopes.map((_, index) => index + 1),
      `${at}: versions`
    )
    const chain = EventHash.verify(envelopes)
    assert.isTrue(chain.ok, `${at}: chain ${JSON.stringify(chain)}`)
    assert.strictEqual(yield* log.version(stream), envelopes.length, `${at}: streams row`)
    const events = envelopes.map((envelope) => envelope.event)
    // Every acknowledged message and compaction is in the log.
    const logged = new Set<string>()
    const removed = new Set<string>()
    const compactions: Array<Extract<WindowEvent.WindowEvent, { _tag: "Compacted" }>> = []
    for (const event of events) {
      if (event._tag === "MessageAppended") logged.add(event.message.id)
      if (event._tag === "Compacted") {
        compactions.push(event)
        if (event.summary !== null) logged.add(event.summary.id)
        for (const id of event.removedIds) removed.add(id)
      }
    }
    const lost = [...acked.messages].filter((id) => !logged.has(id))
    assert.deepStrictEqual(lost, [], `${at}: acknowledged messages lost`)
    assert.isAtLeast(compactions.length, acked.compactions, `${at}: acknowledged compactions lost`)
    // Each compaction fully happened or not: a message is in the window or was replaced by a summary.
    const replayed = Window.replay(events)
    const inWindow = new Set(replayed.history.map((message) => message.id))
    const vanished = [...logged].filter((id) => !inWindow.has(id) && !removed.has(id))
    assert.deepStrictEqual(vanished, [], `${at}: messages that left the window without a summary`)
    assert.deepStrictEqual(
      [...inWindow].filter((id) => !logged.has(id)),
      [],
      `${at}: window messages not in the log`
    )
    assert.strictEqual(inWindow.size, replayed.history.length, `${at}: duplicate window messages`)
    assert.deepStrictEqual(ToolPairs.problems(replayed.history, replayed.completedToolIds), [], `${at}: tool pairs`)
    // The snapshot-backed load equals a full replay.
    const loaded = yield* ctx.load(stream)
    assert.deepStrictEqual(yield* Window.encode(loaded), yield* Window.encode(replayed), `${at}: load`)
    // Did the compaction in flight at the kill reach the log?
    const compactedInFlight =
      inCompaction !== undefined && compactions.some((event) => event.throughVersion >= inCompaction)
    // (a compaction's summary records the version it was decided on, at or after its begin)
    // The stream takes further appends and a further compaction.
    const appended = yield* ctx.appendMessages(stream, exchange(1000 + run))
    for (const event of appended.events) if (event._tag === "MessageAppended") acked.messages.add(event.message.id)
    const manual = yield* TieredCompaction.compactContext(stream, 200)
    if (manual._tag === "Compacted") acked.compactions++
    return { compactedInFlight }
  }).pipe(Effect.provide(layer(target)))

const killTest = (label: string, makeTarget: Effect.Effect<string, EventLog.StoreError>) =>
  describe(`SIGKILL during appends and compaction (${label})`, () => {
    it.live(
      `a process killed at a random moment loses no acknowledged event and leaves no half compaction (${runs} runs)`,
      () =>
        Effect.gen(function* () {
          const target = yield* makeTarget
          const acked: Acknowledged = { messages: new Set(), compactions: 0 }
          // How long 10 exchanges with their compactions take here, and one compaction that writes: kill
          // points are drawn from those spans.
          const calibration = yield* runChild(packageDir, child, [target, stream, "c", "10"], undefined)
          assert.isTrue(calibration.finished)
          record(calibration.lines, acked)
          assert.isTrue(calibration.lines.some((line) => line.startsWith("compact-end SoftCompacted")))
          const span = Math.max(20, calibration.readyToExitMs)
          const writing = compactionSpan(calibration.lines)
          const checks = yield* runKilled(
            packageDir,
            child,
            runs,
            (run) => [target, stream, `r${run}`, "0"],
            // Even runs: anywhere in the child's life. Odd runs: soon after a compaction tier started.
            (run) => (run % 2 === 0 ? Math.random() * span : { after: "tier", ms: Math.random() * writing }),
            (run, killed) =>
              Effect.gen(function* () {
                const { inCompaction, tierStarted } = record(killed.lines, acked)
                const check = yield* checkAndContinue(target, run, acked, inCompaction)
                return { midCompaction: inCompaction !== undefined, tierStarted, ...check }
              })
          )
          const killedMidCompaction = checks.filter((check) => check.midCompaction).length
          const inFlightReached = checks.filter((check) => check.compactedInFlight).length
          const midTier = checks.filter((check) => check.tierStarted).length
          console.log(
            `${label} compaction kills: ${runs} runs, ${killedMidCompaction} mid-compaction (${midTier} after a tier started, ${inFlightReached} after the summary was appended), ${acked.messages.size} acknowledged messages and ${acked.compactions} acknowledged compactions, 0 lost`
          )
          // The kills did land inside compactions (otherwise this test proves nothing).
          assert.isAbove(killedMidCompaction, 0)
        }),
      600_000
    )
  })

killTest(
  "SQLite file",
  Effect.sync(() => tempFile())
)
killTest("PostgreSQL", freshDatabase("compactkill"))
