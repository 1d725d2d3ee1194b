// Per-subject erasure that keeps every chain (issue 43, items 3-5; ADR 0112, 0113, 0139), on SQLite and
// PostgreSQL: a subject's messages in three streams, one of them summarized into another stream's
// summary (with its recall entry), a graph fact and a stored tool output. Before the erasure recall finds
// the sealed text (own stream, cross-session), never for a stream without the subject; after it recall
// finds nothing, no database file holds the plaintext (and, with the index removal left out, the grep
// does find it), every stream verifies, the store re-derives the summary from its remaining sources, and
// the signed receipt verifies offline (and fails once a field is changed or its key revoked).
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { randomBytes } from "node:crypto"
import { EventLog, Message, TokenCounter, type WindowEvent, WindowRepository } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import {
  FileStore,
  FullTextRecall,
  LogReader,
  PostgresEventLog,
  RecallIndex,
  Sealing,
  Signing,
  SqliteEventLog,
  SubjectErasure,
  SubjectKeys
} from "../src/index.js"
import * as StoreSubjectErasure from "../src/internal/storeSubjectErasure.js"
import { freshDatabase } from "./support/postgres.js"
import { postgresRawLayer, RawSql, sqliteRawLayer, tempFile } from "./support/stores.js"

const writer = Signing.generate("privacy-officer")
const keyring = Signing.parseKeyring(Signing.formatKeyring([writer.entry]))
const masterKey = new Uint8Array(randomBytes(32))
// One full-text token (the index lower-cases it): a grep for it also reaches the FTS index's own terms.
const secret = "Zebraquokkasecret7"
const token = secret.toLowerCase()
const fileSecret = "OCELOT-tool-output-of-alice"

const sealing: Sealing.Options = {
  masterKey,
  subjectOf: (stream) => (stream.startsWith("alice-") ? "subject-alice" : undefined)
}

const defaults = { sealing, signer: Signing.signer("privacy-officer", writer.privateKeyPem) }

interface Target {
  readonly label: string
  readonly open: (
    options?: Pick<SqliteEventLog.Options, "sealing" | "signer">
  ) => Effect.Effect<Context.Context<SqliteEventLog.Services>, unknown, Scope.Scope>
  readonly reader: Effect.Effect<LogReader.LogReader.Service, unknown, Scope.Scope>
  readonly raw: Layer.Layer<RawSql, unknown>
  /** Every byte the database keeps on disk, as text (after a checkpoint on PostgreSQL). */
  readonly diskText: Effect.Effect<string, unknown, Scope.Scope>
}

const filesUnder = (path: string): ReadonlyArray<string> =>
  statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => filesUnder(join(path, name))) : [path]

const sqliteTarget = (): Target => {
  const filename = tempFile()
  const dir = join(filename, "..")
  return {
    label: "SQLite",
    open: (options = defaults) => SqliteEventLog.make({ filename, ...options }),
    reader: LogReader.makeSqlite({ filename, integrity: "unverified" }),
    raw: sqliteRawLayer(filename),
    diskText: Effect.sync(() =>
      filesUnder(dir)
        .map((file) => readFileSync(file).toString("latin1"))
        .join("\n")
    )
  }
}

const postgresTarget = (url: string): Target => ({
  label: "PostgreSQL",
  open: (options = defaults) => PostgresEventLog.make({ url, ...options }),
  reader: LogReader.makePostgres({ url, integrity: "unverified" }),
  raw: postgresRawLayer(url),
  diskText: Effect.gen(function* () {
    const raw = yield* Effect.map(Layer.build(postgresRawLayer(url)), Context.get(RawSql))
    yield* raw.exec("checkpoint")
    const [where] = yield* raw.rows(
      "select current_setting('data_directory') as dir, (select oid from pg_database where datname = current_database()) as oid"
    )
    const dir = join(String(where?.dir), "base", String(where?.oid))
    return filesUnder(dir)
      .map((file) => readFileSync(file).toString("latin1"))
      .join("\n")
  })
})

const chat = (id: string, text: string): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id,
  message: { id: `m-${id}`, role: "user", kind: "chat", parts: [{ type: "text", text }], tokens: 5 }
})

const textsOf = (envelopes: ReadonlyArray<EventLog.Envelope>): ReadonlyArray<string> =>
  envelopes.flatMap((envelope) =>
    envelope.event._tag === "MessageAppended"
      ? envelope.event.message.parts.flatMap((part) =>
          part.type === "text" ? [part.text] : part.type === "tool_result" ? [part.content] : []
        )
      : []
  )

const run = (target: Target) =>
  Effect.gen(function* () {
    const context = yield* target.open()
    const log = Context.get(context, EventLog.EventLog)
    const files = Context.get(context, FileStore.FileStore)
    const read = (stream: string) => Effect.map(Stream.runCollect(log.read(stream)), Chunk.toReadonlyArray)

    // The subject's messages in three streams; a tool output of theirs in the file store.
    yield* log.append(
      "alice-1",
      [chat("a1-1", `my code word is ${secret}`), chat("a1-2", "and I live nearby")],
      "no_stream"
    )
    yield* log.append("alice-2", [chat("a2-1", `again ${secret}`)], "no_stream")
    const fact = { subject: "alice", predicate: "uses code word", object: secret, sourceMessageId: "m-a2-1" }
    yield* log.append("alice-2", [{ _tag: "FactsRecorded", id: "a2-facts", facts: [fact] }], 1)
    const content = `${fileSecret}\nline two\nline three`
    const stored = yield* files.put("alice-3", content)
    const handle = { sha256: stored.sha256, bytes: stored.bytes, lines: stored.lines, tokens: 9 }
    yield* log.append(
      "alice-3",
      [
        {
          _tag: "MessageAppended",
          id: "a3-1",
          message: {
            id: "m-a3-1",
            role: "tool",
            kind: "chat",
            parts: [
              { type: "tool_result", toolCallId: "t1", content: FileStore.preview(content, handle, 40), isError: false }
            ],
            tokens: 9
          }
        }
      ],
      "no_stream"
    )
    // Another subject's stream stays as it is.
    yield* log.append("bob-1", [chat("b1-1", "bob's own words")], "no_stream")

    // alice-1 summarized into the shared "team" stream's summary: derived from alice-1's events.
    const alice1 = yield* read("alice-1")
    assert.deepStrictEqual(textsOf(alice1), [`my code word is ${secret}`, "and I live nearby"])
    assert.notInclude(alice1[0]?.data ?? "", secret, "the stored event holds the ciphertext only")
    const summary: WindowEvent.WindowEvent = {
      _tag: "MessageAppended",
      id: "team-summary",
      message: {
        id: "m-team-summary",
        role: "assistant",
        kind: "summary",
        parts: [{ type: "text", text: `summary: alice's code word is ${secret}` }],
        tokens: 8
      }
    }
    yield* log.append("team", [chat("t-1", "team chatter")], "no_stream")
    // ...and from bob-1's message: what the store's re-derivation keeps after alice is erased.
    const bob1 = yield* read("bob-1")
    yield* Sealing.derivedFrom([...alice1, ...bob1], log.append("team", [summary], 1))
    const team = yield* read("team")
    assert.deepStrictEqual(textsOf(team), ["team chatter", `summary: alice's code word is ${secret}`])

    // The recall index holds the summary's entry (a cross-session recall source for other streams).
    const raw = yield* Effect.map(Layer.build(target.raw), Context.get(RawSql))
    const summaryEvent = team[1] as EventLog.Envelope
    const erasure = Context.get(context, SubjectErasure.SubjectErasure)
    // Recall finds sealed content while the key exists (the index holds its plaintext, ADR 0139): in the
    // subject's own stream, and across the subject's sessions (an owner's other streams). A stream of
    // another subject (or none) is never handed it: its injection would be stored in clear.
    const recall = Context.get(context, RecallIndex.RecallIndex)
    for (const stream of ["alice-1", "alice-2", "alice-3"]) yield* recall.setOwner(stream, "alice")
    yield* recall.setOwner("team", "alice")
    const found = (scope: RecallIndex.SearchScope) =>
      Effect.map(recall.search({ scope, query: secret }), (hits) => hits.map((hit) => `${hit.stream}:${hit.text}`))
    assert.deepStrictEqual(yield* found({ _tag: "Stream", stream: "alice-1" }), [`alice-1:my code word is ${secret}`])
    // The team's summary derived from alice-1 is sealed under alice alone: her other sessions recall it.
    assert.sameMembers(yield* found({ _tag: "Owner", owner: "alice", except: "alice-1" }), [
      `alice-2:again ${secret}`,
      `team:summary: alice's code word is ${secret}`
    ])
    assert.deepStrictEqual(yield* found({ _tag: "Stream", stream: "team" }), [], "team has no subject to seal it")
    assert.deepStrictEqual(yield* found({ _tag: "Owner", owner: "alice" }), [], "no receiving stream named")
    // The same through the recall source a turn uses: cross-session context for alice-2 is alice-1's text.
    const source = yield* FullTextRecall.make().pipe(
      Effect.provideService(RecallIndex.RecallIndex, recall),
      Effect.provide(TokenCounter.layerHeuristic())
    )
    const recalled = (kind: "recall" | "cross_session", stream: string) =>
      Effect.map(source.recall({ kind, stream, query: secret, budget: 500, owner: "alice" }), (hits) =>
        hits.map((hit) => Message.textOf(hit.message)).join("\n")
      )
    assert.include(yield* recalled("cross_session", "alice-2"), `my code word is ${secret}`)
    assert.include(yield* recalled("recall", "alice-1"), `my code word is ${secret}`)
    assert.notInclude(yield* recalled("recall", "team"), secret)
    const facts = (scope: RecallIndex.FactScope) =>
      Effect.map(recall.factsFor(scope, `the code ${secret}`), (hits) => hits.map((hit) => hit.object))
    assert.deepStrictEqual(yield* facts({ _tag: "Stream", stream: "alice-2" }), [secret])
    assert.deepStrictEqual(yield* facts({ _tag: "Owner", owner: "alice" }), [], "no receiving stream named")

    // The file store held the tool output in clear until the erasure, and the recall index the messages'
    // text: the grep below sees plaintext, so its finding none after the erasure means something.
    const before = yield* target.diskText
    assert.include(before, fileSecret)
    assert.include(before, secret)

    // No `rederive`: the store re-derives the team's summary from the lineage its seal records (alice-1's
    // events, erased, and bob-1's, still readable), as a compaction replacing it in the window.
    const receipt = yield* erasure.erase("subject-alice", { actor: "dpo@example.com", reason: "GDPR art. 17 request" })
    const entries = yield* raw.rows(`select * from recall_entries where global_position = ${summaryEvent.position}`)
    assert.deepStrictEqual(entries, [], "the summary's recall entry is removed")

    // No database file holds the plaintext (SQLite: the WAL checkpointed and the file vacuumed), and recall
    // finds nothing of it.
    const after = yield* target.diskText
    assert.notInclude(after, secret)
    assert.notInclude(after.toLowerCase(), token)
    assert.notInclude(after, fileSecret)
    assert.deepStrictEqual(yield* found({ _tag: "Stream", stream: "alice-1" }), [])
    assert.deepStrictEqual(yield* found({ _tag: "Owner", owner: "alice", except: "alice-1" }), [])
    assert.deepStrictEqual(yield* facts({ _tag: "Stream", stream: "alice-2" }), [])
    assert.deepStrictEqual((yield* recall.rebuild()).events > 0, true)
    assert.deepStrictEqual(yield* found({ _tag: "Owner", owner: "alice", except: "alice-3" }), [], "after a rebuild")

    // The content reads as erased everywhere; the other subject's stream is untouched.
    assert.deepStrictEqual(textsOf(yield* read("alice-1")), [Sealing.erasedText, Sealing.erasedText])
    assert.deepStrictEqual(textsOf(yield* read("team")), ["team chatter", Sealing.erasedText])
    const teamAfter = yield* read("team")
    const rederived = teamAfter[2]?.event
    assert.strictEqual(rederived?._tag, "Compacted")
    const rederivedText = "[summary re-derived after an erasure from 1 of its 3 sources]\nbob's own words"
    assert.deepStrictEqual(rederived?._tag === "Compacted" ? rederived.summary?.parts : undefined, [
      { type: "text", text: rederivedText }
    ])
    assert.deepStrictEqual(rederived?._tag === "Compacted" ? rederived.removedIds : undefined, ["m-team-summary"])
    // The window reads the new summary in the erased one's place.
    const window = yield* Context.get(context, WindowRepository.WindowRepository).load("team")
    assert.deepStrictEqual(
      window.history.map((message) => message.parts),
      [[{ type: "text", text: "team chatter" }], [{ type: "text", text: rederivedText }]]
    )
    assert.deepStrictEqual(textsOf(yield* read("bob-1")), ["bob's own words"])

    // Every stream verifies: signed batches, chains and heads as before.
    const reader = yield* target.reader
    for (const stream of ["alice-1", "alice-2", "alice-3", "bob-1", "team"]) {
      const verified = yield* reader.verify(stream, { keyring })
      assert.deepStrictEqual(verified.integrity.problems, [], stream)
    }

    // The receipt lists what was reached, heads unchanged, and verifies offline.
    const kinds = receipt.artifacts.map((artifact) => `${artifact.kind}:${artifact.stream}:${artifact.action}`)
    assert.includeMembers(kinds, [
      "message:alice-1:unreadable",
      "message:alice-2:unreadable",
      "message:alice-3:unreadable",
      "summary:team:re-derived",
      "recall entry:team:removed",
      "graph fact:alice-2:removed",
      "file:alice-3:removed"
    ])
    assert.notInclude(kinds.join(" "), "bob-1")
    assert.notInclude(
      receipt.artifacts.map((artifact) => artifact.ref).join(" "),
      "t-1",
      "team's own message is not the subject's"
    )
    const summaryArtifact = receipt.artifacts.find((artifact) => artifact.kind === "summary")
    assert.deepStrictEqual(
      summaryArtifact?.derivedFrom,
      [...alice1, ...bob1].map((envelope) => ({ stream: envelope.stream, eventId: envelope.eventId }))
    )
    assert.deepStrictEqual(summaryArtifact?.replacedBy, [teamAfter[2]?.eventId ?? "missing"])
    // Heads: unchanged but for the team stream, one event longer (the re-derived summary).
    const versions = (heads: ReadonlyArray<SubjectErasure.Head>) =>
      heads.map((head) => `${head.stream}@${head.version}`)
    assert.deepStrictEqual(versions(receipt.headsBefore), ["alice-1@2", "alice-2@2", "alice-3@1", "team@2"])
    assert.deepStrictEqual(versions(receipt.headsAfter), ["alice-1@2", "alice-2@2", "alice-3@1", "team@3"])
    assert.strictEqual(receipt.keysDestroyed, 1)
    const offline = JSON.parse(JSON.stringify(receipt)) as unknown
    assert.deepStrictEqual(SubjectErasure.verifyReceipt(offline, keyring), {
      ok: true,
      writer: "privacy-officer",
      keyId: writer.entry.keyId,
      problems: []
    })
    const forged = { ...receipt, artifacts: receipt.artifacts.slice(1) }
    assert.isFalse(SubjectErasure.verifyReceipt(forged, keyring).ok)
    const revoked = Signing.parseKeyring(Signing.formatKeyring([{ ...writer.entry, revoked: "stolen" }]))
    assert.match(SubjectErasure.verifyReceipt(offline, revoked).problems.join(" "), /revoked/)
    assert.deepStrictEqual(yield* erasure.receipts("subject-alice"), [receipt])
  })

// A log written before sealing opens and verifies as before; a subject's key rotates (both keys open what
// they sealed, both are destroyed); a compaction whose receipt names a sealed source is sealed under the
// source's subject, one whose sources are in clear stays in clear. The keys come from a caller's service.
const rotation = (target: Target) =>
  Effect.gen(function* () {
    yield* Effect.scoped(
      Effect.flatMap(target.open({}), (plain) =>
        Context.get(plain, EventLog.EventLog).append("legacy", [chat("l-1", `old ${secret}`)], "no_stream")
      )
    )
    // The schema of the release before issue 43: migrations 0014 and 0015 only add tables.
    const raw = yield* Effect.map(Layer.build(target.raw), Context.get(RawSql))
    for (const table of ["batch_signatures", "subject_keys", "subject_erasures"]) yield* raw.exec(`drop table ${table}`)
    // 0016 came later: empty on PostgreSQL (whose migrator wants the names in order), a rebuild of
    // `events` on SQLite that this older file has had already (eventPositions.test.ts covers its upgrade).
    const later = raw.dialect === "postgres" ? ", '0016_event_positions'" : ""
    yield* raw.exec(
      `delete from kysely_migration where name in ('0014_batch_signatures', '0015_subject_erasure'${later})`
    )
    const old = yield* Effect.scoped(Effect.flatMap(target.reader, (reader) => reader.verify("legacy")))
    assert.deepStrictEqual(old.integrity.problems, [])
    const keys = SubjectKeys.makeMemory()
    const context = yield* target.open({ ...defaults, sealing: { ...sealing, masterKey: undefined, keys } })
    const log = Context.get(context, EventLog.EventLog)
    const read = (stream: string) => Effect.map(Stream.runCollect(log.read(stream)), Chunk.toReadonlyArray)
    const reader = yield* target.reader
    assert.deepStrictEqual(textsOf(yield* read("legacy")), [`old ${secret}`])
    assert.deepStrictEqual((yield* reader.verify("legacy")).integrity.problems, [])

    yield* log.append("alice-9", [chat("r-1", "before rotation")], "no_stream")
    yield* keys.rotate("subject-alice")
    yield* log.append("alice-9", [chat("r-2", "after rotation")], 1)
    const alice = yield* read("alice-9")
    assert.deepStrictEqual(textsOf(alice), ["before rotation", "after rotation"])
    const keyIds = alice.map((envelope) => Sealing.headersIn(envelope.data)[0]?.k[0]?.[1])
    assert.notStrictEqual(keyIds[0], keyIds[1])

    yield* log.append("team2", [chat("u-1", "plain team words")], "no_stream")
    yield* Sealing.derivedFrom(alice, log.append("team2", [chat("u-2", "from alice: after rotation")], 1))
    const team = yield* read("team2")
    const compaction = (id: string, sources: ReadonlyArray<string>, text: string): WindowEvent.WindowEvent => ({
      _tag: "Compacted",
      id,
      tier: "manual",
      summary: { id: `m-${id}`, role: "assistant", kind: "summary", parts: [{ type: "text", text }], tokens: 4 },
      removedIds: [],
      carryOver: text,
      throughVersion: 2,
      cooldownTurns: 0,
      receipt: { tokensBefore: 10, tokensAfter: 4, replacedTokens: 6, sources }
    })
    yield* log.append("team2", [compaction("c-1", [team[1]?.eventId ?? ""], "rolled up: after rotation")], 2)
    yield* log.append("team2", [compaction("c-2", [team[0]?.eventId ?? ""], "rolled up: plain team words")], 3)
    const compacted = yield* read("team2")
    assert.deepStrictEqual(Sealing.subjectsIn(compacted[2]?.data ?? ""), ["subject-alice"])
    assert.notInclude(compacted[2]?.data ?? "", "rolled up")
    assert.deepStrictEqual(Sealing.subjectsIn(compacted[3]?.data ?? ""), [])

    // The caller's `rederive` overrides the store's own: here it gives nothing, so the summary stays unreadable.
    const receipt = yield* Context.get(context, SubjectErasure.SubjectErasure).erase("subject-alice", {
      actor: "dpo",
      reason: "request",
      rederive: () => Effect.succeed([])
    })
    assert.strictEqual(receipt.keysDestroyed, 2)
    const reached = receipt.artifacts
      .filter((artifact) => artifact.action === "unreadable")
      .map((artifact) => artifact.ref)
    assert.deepStrictEqual(reached, [alice[0]?.eventId, alice[1]?.eventId, "u-2", "c-1"])
    const after = yield* read("team2")
    const summaryText = (envelope: EventLog.Envelope | undefined) =>
      envelope?.event._tag === "Compacted" ? [envelope.event.carryOver, envelope.event.summary?.parts] : []
    assert.deepStrictEqual(summaryText(after[2]), [Sealing.erasedText, [{ type: "text", text: Sealing.erasedText }]])
    assert.deepStrictEqual(summaryText(after[3]), [
      "rolled up: plain team words",
      [{ type: "text", text: "rolled up: plain team words" }]
    ])
    for (const stream of ["legacy", "alice-9", "team2"]) {
      assert.deepStrictEqual(
        (yield* reader.verify(stream, stream === "legacy" ? {} : { keyring })).integrity.problems,
        [],
        stream
      )
    }
    assert.deepStrictEqual(textsOf(yield* read("legacy")), [`old ${secret}`])
    // A later compaction of the erased summary derives nothing from the erased subject: it stays in clear,
    // and no new key is made for the subject.
    yield* log.append("team2", [compaction("c-3", ["c-1"], "rolled up again")], 4)
    const last = (yield* read("team2"))[4]
    assert.deepStrictEqual(Sealing.subjectsIn(last?.data ?? ""), [])
    assert.strictEqual(yield* keys.destroy("subject-alice"), 0)
  })

// The check bites: with the erasure's removal of the recall index's rows left out, the plaintext those rows
// hold is still on disk after the keys are destroyed and the files compacted.
const withoutIndexRemoval = (target: Target) =>
  Effect.gen(function* () {
    const context = yield* target.open()
    const log = Context.get(context, EventLog.EventLog)
    yield* log.append("alice-1", [chat("a1-1", `my code word is ${secret}`)], "no_stream")
    const hits = yield* Context.get(context, RecallIndex.RecallIndex).search({
      scope: { _tag: "Stream", stream: "alice-1" },
      query: secret
    })
    assert.strictEqual(hits.length, 1)
    const receipt = yield* Effect.locally(
      Context.get(context, SubjectErasure.SubjectErasure).erase("subject-alice", { actor: "dpo", reason: "test" }),
      StoreSubjectErasure.skippedSteps,
      new Set(["recall index"] as const)
    )
    assert.strictEqual(receipt.keysDestroyed, 1)
    assert.notInclude(receipt.artifacts.map((artifact) => artifact.kind).join(" "), "recall entry")
    assert.include(yield* target.diskText, secret)
  })

describe("per-subject erasure", () => {
  it.scoped("SQLite: without the recall index's removal, the grep finds the plaintext", () =>
    withoutIndexRemoval(sqliteTarget())
  )
  it.scoped(
    "PostgreSQL: without the recall index's removal, the grep finds the plaintext",
    () => Effect.flatMap(freshDatabase("bites"), (url) => withoutIndexRemoval(postgresTarget(url))),
    60_000
  )
  it.scoped("SQLite: an old log, key rotation, and a compaction sealed by its receipt's sources", () =>
    rotation(sqliteTarget())
  )
  it.scoped(
    "PostgreSQL: an old log, key rotation, and a compaction sealed by its receipt's sources",
    () => Effect.flatMap(freshDatabase("rotation"), (url) => rotation(postgresTarget(url))),
    60_000
  )
  it.scoped("SQLite: the subject is erased everywhere, every chain verifies, the receipt verifies offline", () =>
    run(sqliteTarget())
  )
  it.scoped(
    "PostgreSQL: the subject is erased everywhere, every chain verifies, the receipt verifies offline",
    () => Effect.flatMap(freshDatabase("subject"), (url) => run(postgresTarget(url))),
    60_000
  )
})
