import { createHash } from "node:crypto"
import { EventHash } from "@ctxlog/core"
import type * as LogReader from "../LogReader.js"
import * as Signing from "../Signing.js"
import { projection } from "../SnapshotRepository.js"

/** Where a problem was found, and what to do about it. */
const problem = (stream: string, version: number, check: LogReader.Check, detail: string): LogReader.Problem => ({
  stream,
  version,
  check,
  detail
})

/**
 * What is wrong with a snapshot's seal, if anything (`EventHash.seal`): unkeyed, the SHA-256 of its state;
 * keyed, an HMAC over the state and the hash of the event it ends at (`anchor`, undefined when missing).
 */
export const sealProblem = (
  snapshot: LogReader.StoredSnapshot,
  anchor: string | undefined,
  key: EventHash.ChainKey | undefined
): string | undefined => {
  const stored = snapshot.stateHash
  if (stored === undefined) return undefined
  if (!stored.startsWith(EventHash.keyedPrefix)) {
    if (EventHash.sha256(snapshot.state) !== stored) return "the snapshot does not match its hash (edited or corrupted)"
    return key === undefined ? undefined : "the snapshot is not sealed with the HMAC key (unkeyed hash)"
  }
  if (key === undefined) return "the snapshot is sealed with an HMAC key: give the key to check it"
  if (anchor === undefined) return `the snapshot ends at version ${snapshot.version}, whose event is missing`
  return EventHash.seal({ ...snapshot, projection, anchor }, key) === stored
    ? undefined
    : "the snapshot does not match its seal (edited, moved onto other events, or sealed with another key)"
}

/**
 * Check one stream as stored: versions run 1..n, the hash chain holds (keyed with `key`: a keyed stream
 * read without its key, or with another, fails), the `streams` row agrees with the events (its version,
 * head hash and, keyed, its seal), an expected head kept elsewhere is still in the chain, and the stored
 * snapshot's seal matches. Pure: O(events), one hash per event.
 */
/** A stored output of the file store, as the reader reads it. */
export interface StoredFile {
  readonly sha256: string
  readonly content: string
}

// The handle line a stored output's preview starts with (`FileStore.handleLine`), as it stands in event JSON.
const handlePattern = /\[stored output id=([0-9a-f]{16}),/g

/**
 * The file store's part of a check: every stored output hashes to its key, and every handle an event
 * holds has its stored output (a problem names the event's version).
 */
export const checkFiles = (
  stream: string,
  events: ReadonlyArray<LogReader.StoredEvent>,
  files: ReadonlyArray<StoredFile>
): ReadonlyArray<LogReader.Problem> => {
  const problems: Array<LogReader.Problem> = []
  const firstUse = new Map<string, number>()
  for (const event of events) {
    for (const match of event.data.matchAll(handlePattern)) {
      const id = match[1] ?? ""
      if (!firstUse.has(id)) firstUse.set(id, event.version)
    }
  }
  const stored = new Set(files.map((file) => file.sha256.slice(0, 16)))
  const last = events.at(-1)?.version ?? 0
  for (const file of files) {
    const actual = createHash("sha256").update(file.content, "utf8").digest("hex")
    if (actual !== file.sha256) {
      const version = firstUse.get(file.sha256.slice(0, 16)) ?? last
      problems.push(
        problem(
          stream,
          version,
          "stored-output",
          `stored output ${file.sha256.slice(0, 16)}… hashes to ${actual.slice(0, 16)}…: its text was changed`
        )
      )
    }
  }
  for (const [id, version] of firstUse) {
    if (!stored.has(id)) {
      problems.push(problem(stream, version, "stored-output", `the stored output ${id} its event names is missing`))
    }
  }
  return problems
}

export const check = (
  stream: string,
  events: ReadonlyArray<LogReader.StoredEvent>,
  row: LogReader.StreamRow | undefined,
  snapshot: LogReader.StoredSnapshot | undefined,
  options: LogReader.VerifyOptions,
  files: ReadonlyArray<StoredFile> = [],
  batches: ReadonlyArray<Signing.StoredBatch> = []
): LogReader.Integrity => {
  const key = options.key
  const problems: Array<LogReader.Problem> = [...checkFiles(stream, events, files)]
  const gap = events.findIndex((event, index) => event.version !== index + 1)
  if (gap >= 0) {
    problems.push(
      problem(
        stream,
        gap + 1,
        "versions",
        `version ${gap + 1} is missing (the next stored event is version ${events[gap]?.version ?? "?"}): an event was deleted`
      )
    )
  }
  const head = row === undefined ? undefined : EventHash.parseHead(row.headHash)
  const keyProblem = head === undefined ? undefined : EventHash.keyProblem(head.keyId, key)
  // The hash of each stored event, as the chain gives it up to the first broken link.
  let previous = EventHash.genesis
  let chainOk = true
  if (keyProblem !== undefined) {
    // Checking the links with the wrong key (or none) would only report the first one as broken.
    problems.push(problem(stream, 1, "hash-chain", keyProblem))
    chainOk = false
  } else {
    for (const event of events) {
      const expected = EventHash.chain(previous, event, key)
      if (expected !== event.hash) {
        problems.push(
          problem(
            stream,
            event.version,
            "hash-chain",
            `stored hash ${event.hash.slice(0, 16)}… but the chain gives ${expected.slice(0, 16)}… (the event or one before it was changed)`
          )
        )
        chainOk = false
        break
      }
      previous = expected
    }
  }
  const last = events.at(-1)
  const lastVersion = last?.version ?? 0
  if (row === undefined || head === undefined) {
    if (events.length > 0) problems.push(problem(stream, 1, "stream-row", "the stream has events but no streams row"))
  } else if (row.version > lastVersion) {
    problems.push(
      problem(
        stream,
        lastVersion + 1,
        "stream-row",
        `the streams row says version ${row.version}, but the events end at version ${lastVersion} (events deleted)`
      )
    )
  } else if (row.version < lastVersion) {
    problems.push(
      problem(
        stream,
        row.version + 1,
        "stream-row",
        `the events go on to version ${lastVersion}, past the streams row's version ${row.version}`
      )
    )
  } else if (last !== undefined && head.hash !== last.hash) {
    problems.push(
      problem(
        stream,
        lastVersion,
        "stream-row",
        `the streams row's head hash ${head.hash.slice(0, 16)}… differs from the last event's ${last.hash.slice(0, 16)}…`
      )
    )
  } else if (
    key !== undefined &&
    keyProblem === undefined &&
    head.keyId !== undefined &&
    head.seal !== EventHash.headSeal({ stream, version: row.version, hash: head.hash }, key)
  ) {
    problems.push(
      problem(
        stream,
        row.version,
        "stream-row",
        "the streams row does not match its seal (rewritten without the key, e.g. to hide deleted events)"
      )
    )
  }
  const expected = options.expectedHead
  if (expected !== undefined) {
    const at = events[expected.version - 1]
    if (expected.version > lastVersion || at === undefined || at.version !== expected.version) {
      problems.push(
        problem(
          stream,
          Math.min(expected.version, lastVersion + 1),
          "expected-head",
          `the head kept elsewhere is version ${expected.version}, but the stream ends at version ${lastVersion} (events deleted)`
        )
      )
    } else if (at.hash !== expected.hash) {
      problems.push(
        problem(
          stream,
          expected.version,
          "expected-head",
          `the head kept elsewhere is ${expected.hash.slice(0, 16)}… at version ${expected.version}, the log has ${at.hash.slice(0, 16)}… (the chain was rewritten)`
        )
      )
    }
  }
  problems.push(...checkAnchors(stream, events, options.anchors ?? []))
  let reports: LogReader.Integrity["batches"] = batches.map((batch) => ({
    firstVersion: batch.firstVersion,
    lastVersion: batch.lastVersion,
    writer: batch.writer,
    keyId: batch.keyId,
    status: "unchecked" as const
  }))
  if (options.keyring !== undefined) {
    const signed = Signing.checkBatches(stream, events, batches, options.keyring, EventHash.genesis)
    reports = signed.batches
    for (const found of signed.problems) problems.push(problem(stream, found.version, "signature", found.detail))
  }
  if (snapshot !== undefined) {
    const anchor = snapshot.version === 0 ? EventHash.genesis : events[snapshot.version - 1]?.hash
    const sealed = sealProblem(snapshot, anchor, key)
    if (sealed !== undefined) problems.push(problem(stream, snapshot.version, "snapshot", sealed))
    else if (snapshot.version > lastVersion) {
      problems.push(
        problem(
          stream,
          snapshot.version,
          "snapshot",
          `the snapshot is at version ${snapshot.version}, past the stream's ${lastVersion} events`
        )
      )
    }
  }
  problems.sort((a, b) => a.version - b.version)
  return {
    stream,
    events: events.length,
    head: chainOk && last !== undefined ? { version: lastVersion, hash: last.hash } : undefined,
    keyed: head?.keyId !== undefined,
    snapshot: snapshot?.version,
    problems,
    batches: reports
  }
}

const at = (ms: number) => new Date(ms).toISOString()

/**
 * The heads an anchor kept for a stream against its stored events: the first kept head the log no longer
 * holds (another hash at its version: the chain was recomputed after an edit; past the end: a truncation
 * or a rollback of the database). One problem at most of each kind.
 */
export const checkAnchors = (
  stream: string,
  events: ReadonlyArray<LogReader.StoredEvent>,
  anchors: ReadonlyArray<{ readonly version: number; readonly hash: string; readonly anchoredAt: number }>
): ReadonlyArray<LogReader.Problem> => {
  const found: Array<LogReader.Problem> = []
  const lastVersion = events.at(-1)?.version ?? 0
  const byVersion = new Map(events.map((event) => [event.version, event.hash]))
  const sorted = [...anchors].sort((a, b) => a.version - b.version)
  const changed = sorted.find((head) => {
    const held = byVersion.get(head.version)
    return held !== undefined && held !== head.hash
  })
  if (changed !== undefined) {
    found.push(
      problem(
        stream,
        changed.version,
        "anchor",
        `anchored ${changed.hash.slice(0, 16)}… at version ${changed.version} (${at(changed.anchoredAt)}), the log has ${byVersion.get(changed.version)?.slice(0, 16)}…: an event at or before it was changed and the chain recomputed`
      )
    )
  }
  const beyond = sorted.at(-1)
  if (beyond !== undefined && beyond.version > lastVersion) {
    found.push(
      problem(
        stream,
        lastVersion + 1,
        "anchor",
        `anchored at version ${beyond.version} (${at(beyond.anchoredAt)}), but the stream ends at version ${lastVersion}: a truncation or a rollback`
      )
    )
  } else {
    const missing = sorted.find((head) => head.version >= 1 && !byVersion.has(head.version))
    if (missing !== undefined) {
      found.push(
        problem(
          stream,
          missing.version,
          "anchor",
          `anchored version ${missing.version} is missing from the log (an event was deleted)`
        )
      )
    }
  }
  return found
}
