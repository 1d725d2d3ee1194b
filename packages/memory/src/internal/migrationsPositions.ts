import { type Kysely, type Migration, sql } from "kysely"
import type { Dialect } from "./schema.js"

/**
 * SQLite `events` without `AUTOINCREMENT` (issue 42, ADR 0132). `AUTOINCREMENT` kept a position from being
 * used twice by writing `sqlite_sequence` in every append transaction: one more WAL page per commit (of
 * about seven). A position can only be used twice when the rows at the top of the log are deleted,
 * which only an erasure does; so the high-water mark lives in `event_positions` (one row), which an
 * erasure raises before it deletes, and an append numbers its events after the greater of the last
 * position and that mark (a read, no write). The table is copied into the new shape once, in the
 * migration's transaction (positions, ids, hashes and bytes as they were); the view and the triggers
 * over it are made again from their stored text. PostgreSQL's identity column never hands a number out
 * twice and is left as it is.
 */
export const eventPositions = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    if (dialect !== "sqlite") return
    const dependents = await sql<{ type: string; name: string; sql: string }>`
      select type, name, sql from sqlite_master
      where (type = 'trigger' and tbl_name = 'events') or (type = 'view' and name = 'recall_text')`.execute(db)
    const view = dependents.rows.find((row) => row.type === "view")
    if (view !== undefined) await sql`drop view recall_text`.execute(db)
    await sql`create table events_next (
      global_position integer primary key,
      event_id text not null unique,
      stream_id text not null references streams (stream_id),
      stream_version integer not null,
      type text not null,
      schema_version integer not null,
      data text not null,
      metadata text not null,
      recorded_at integer not null,
      hash text not null,
      constraint events_stream_version_unique unique (stream_id, stream_version)
    ) strict`.execute(db)
    await sql`insert into events_next (global_position, event_id, stream_id, stream_version, type, schema_version,
        data, metadata, recorded_at, hash)
      select global_position, event_id, stream_id, stream_version, type, schema_version, data, metadata,
        recorded_at, hash
      from events order by global_position`.execute(db)
    await sql`create table event_positions (high_water integer not null) strict`.execute(db)
    // The highest position ever handed out: AUTOINCREMENT's counter (it covers erased tails too).
    await sql`insert into event_positions (high_water)
      select max(
        coalesce((select seq from sqlite_sequence where name = 'events'), 0),
        coalesce((select max(global_position) from events), 0)
      )`.execute(db)
    await sql`drop table events`.execute(db)
    await sql`delete from sqlite_sequence where name = 'events'`.execute(db)
    await sql`alter table events_next rename to events`.execute(db)
    for (const row of dependents.rows) {
      if (row.type === "trigger") await sql.raw(row.sql).execute(db)
    }
    if (view !== undefined) await sql.raw(view.sql).execute(db)
  }
})
