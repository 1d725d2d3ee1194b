import { EventHash, EventLog } from "@ctxlog/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { sql } from "kysely"
import type * as SnapshotStore from "../SnapshotStore.js"
import * as SnapshotState from "./snapshotState.js"
import type { StoreShared } from "./storeShared.js"

/** The snapshot store of a durable store: one row per stream and projection, sealed (keyed: anchored). */
export const make = (shared: StoreShared): SnapshotStore.SnapshotStore.Service => {
  const { backend, options, visible } = shared

  // A keyed seal covers the stored hash of the event the snapshot ends at (one indexed read per save;
  // the unkeyed seal is the state's SHA-256 alone, as before, and reads nothing).
  const anchorOf = (snapshot: { readonly stream: string; readonly version: number }) =>
    options.hmacKey === undefined || snapshot.version === 0
      ? Effect.succeed(EventHash.genesis)
      : backend
          .query("read snapshot anchor", (db) =>
            db
              .selectFrom("events")
              .select("hash")
              .where("stream_id", "=", snapshot.stream)
              .where("stream_version", "=", snapshot.version)
              .executeTakeFirst()
          )
          .pipe(
            Effect.flatMap((row) =>
              row === undefined
                ? Effect.fail(
                    new EventLog.StoreError({
                      operation: "save snapshot",
                      detail: `stream "${snapshot.stream}" has no event at version ${snapshot.version}`
                    })
                  )
                : Effect.succeed(row.hash)
            )
          )
  const latestSnapshot = (stream: string, projection: string) =>
    backend
      .query("read snapshot", (db) =>
        db
          .selectFrom("snapshots")
          .selectAll()
          .where("stream_id", "=", stream)
          .where("projection", "=", projection)
          .executeTakeFirst()
      )
      .pipe(
        Effect.map((row) =>
          row === undefined
            ? Option.none()
            : Option.some({
                stream: row.stream_id,
                projection: row.projection,
                projectionVersion: row.projection_version,
                version: row.stream_version,
                state: SnapshotState.decode(row.state),
                stateHash: row.state_hash ?? undefined,
                createdAt: row.created_at,
                // The digest of the bytes themselves, when this row has one (SQLite, saved since 0013).
                ...(typeof row.state !== "string" && typeof row.stored_hash === "string"
                  ? { stored: { bytes: row.state, sha256: row.stored_hash } }
                  : {})
              })
        )
      )

  const saveSnapshot: SnapshotStore.SnapshotStore.Service["save"] = (snapshot) =>
    Effect.flatMap(Effect.all([Clock.currentTimeMillis, anchorOf(snapshot)]), ([now, anchor]) => {
      // The seal covers the JSON text; the row keeps its stored form (deflated on SQLite).
      const stateHash = EventHash.seal({ ...snapshot, anchor }, options.hmacKey)
      const stored = SnapshotState.encode(backend.dialect, snapshot.state)
      const storedType = sql.raw(backend.dialect === "sqlite" ? "blob" : "text")
      // SQLite: the digest of the stored bytes too, which a load checks instead of hashing the text (ADR 0086).
      const storedHash = typeof stored === "string" ? undefined : SnapshotState.digest(stored)
      return backend.query("save snapshot", (db) =>
        db
          .insertInto("snapshots")
          .columns([
            "stream_id",
            "projection",
            "projection_version",
            "stream_version",
            "state",
            "state_hash",
            "created_at",
            ...(storedHash === undefined ? [] : ["stored_hash" as const])
          ])
          // Only while the stream holds that version: a window saved after its stream was erased (by
          // another process, between this process's append and its save) is not written back.
          .expression((eb) =>
            eb
              .selectFrom("streams")
              .select([
                sql<string>`cast(${snapshot.stream} as text)`.as("stream_id"),
                sql<string>`cast(${snapshot.projection} as text)`.as("projection"),
                sql<number>`cast(${snapshot.projectionVersion} as integer)`.as("projection_version"),
                sql<number>`cast(${snapshot.version} as bigint)`.as("stream_version"),
                sql<string | Uint8Array>`cast(${stored} as ${storedType})`.as("state"),
                sql<string>`cast(${stateHash} as text)`.as("state_hash"),
                sql<number>`cast(${now} as bigint)`.as("created_at"),
                ...(storedHash === undefined ? [] : [sql<string>`cast(${storedHash} as text)`.as("stored_hash")])
              ])
              .where("streams.stream_id", "=", snapshot.stream)
              .where("streams.version", ">=", snapshot.version)
          )
          .onConflict((conflict) =>
            conflict
              .columns(["stream_id", "projection"])
              .doUpdateSet((eb) => ({
                projection_version: snapshot.projectionVersion,
                stream_version: snapshot.version,
                state: eb.ref("excluded.state"),
                state_hash: stateHash,
                created_at: now,
                ...(storedHash === undefined ? {} : { stored_hash: storedHash })
              }))
              // Another process may have saved a newer window of the same projection version: keep it. The
              // same version is replaced (same window; it may repair an edited or corrupted row).
              .where((eb) =>
                eb.or([
                  eb("snapshots.projection_version", "<>", snapshot.projectionVersion),
                  eb("snapshots.stream_version", "<=", snapshot.version)
                ])
              )
          )
          .execute()
          .then(() => undefined)
      )
    })

  return {
    latest: (stream, projection) =>
      Effect.flatMap(visible(stream), (seen) =>
        seen ? latestSnapshot(stream, projection) : Effect.succeed(Option.none())
      ),
    save: (snapshot) =>
      Effect.flatMap(visible(snapshot.stream), (seen) => (seen ? saveSnapshot(snapshot) : Effect.void))
  }
}
