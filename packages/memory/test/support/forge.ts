// What an attacker with write access to the database can do, for the tamper-evidence tests: drop the
// append-only triggers, edit an event's text, and recompute the hash chain from there on.
import { EventHash } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import type { RawSql } from "./stores.js"

/** A SQL string literal. */
export const quote = (text: string) => `'${text.replaceAll("'", "''")}'`

/** Let raw SQL change what the append-only triggers protect (an attacker with the database can). */
export const disableTriggers = (raw: RawSql["Type"]) =>
  raw.dialect === "sqlite"
    ? raw.exec("drop trigger events_reject_update; drop trigger events_reject_delete")
    : raw.exec("alter table events disable trigger user")

/**
 * Replace `marker` by FORGED in the event at `version` (the triggers must be off); then, unless `rechain`
 * is "none", recompute the hashes of that event and every later one, unkeyed or under `rechain.key` (an
 * attacker's own key). Returns the new last hash. The `streams` row is left alone.
 */
export const forgeEvent = (
  raw: RawSql["Type"],
  stream: string,
  version: number,
  marker: string,
  rechain: "none" | "unkeyed" | { readonly key: string }
) =>
  Effect.gen(function* () {
    yield* raw.exec(
      `update events set data = replace(data, ${quote(marker)}, 'FORGED') where stream_id = ${quote(stream)} and stream_version = ${version}`
    )
    let previous = EventHash.genesis
    if (rechain === "none") return previous
    const rows = yield* raw.rows(
      `select stream_version, event_id, type, schema_version, data, hash from events where stream_id = ${quote(stream)} order by stream_version`
    )
    for (const row of rows) {
      const record = {
        stream,
        version: Number(row.stream_version),
        eventId: String(row.event_id),
        type: String(row.type),
        schemaVersion: Number(row.schema_version),
        data: String(row.data)
      }
      if (record.version < version) {
        previous = String(row.hash)
        continue
      }
      previous = EventHash.chain(previous, record, rechain === "unkeyed" ? undefined : rechain.key)
      yield* raw.exec(
        `update events set hash = ${quote(previous)} where stream_id = ${quote(stream)} and stream_version = ${record.version}`
      )
    }
    return previous
  })
