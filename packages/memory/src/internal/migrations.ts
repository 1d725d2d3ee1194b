import { type Kysely, type Migration, type MigrationProvider, sql } from "kysely"
import { subjectErasure } from "./migrationsSubjects.js"
import { eventPositions } from "./migrationsPositions.js"
import type { Dialect } from "./schema.js"

/**
 * The PostgreSQL advisory lock key of the global-read gate: appends hold it shared, readers of the whole
 * log (by global position) exclusively. Migration 0011 writes it into `ctxlog_append`; never change it.
 */
export const appendGateKey = 0x6374786c6f67 // "ctxlog"

// Migrations are numbered, append-only and shipped in code: never edit one that has been released, add
// the next number instead. The schema they produce is checked against test/schema.*.snapshot.json.

/** Integers that hold positions, versions and epoch milliseconds. */
const bigint = (dialect: Dialect) => (dialect === "sqlite" ? "integer" : "bigint")

const events = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const int = bigint(dialect)
    const strict = dialect === "sqlite" ? sql`strict` : sql``
    await db.schema
      .createTable("streams")
      .addColumn("stream_id", "text", (c) => c.primaryKey())
      .addColumn("version", int, (c) => c.notNull())
      .addColumn("head_hash", "text", (c) => c.notNull())
      .addColumn("created_at", int, (c) => c.notNull())
      .addColumn("updated_at", int, (c) => c.notNull())
      .modifyEnd(strict)
      .execute()
    await db.schema
      .createTable("events")
      .addColumn("global_position", int, (c) =>
        // AUTOINCREMENT: a position is never reused, even after a rolled-back tail.
        dialect === "sqlite" ? c.primaryKey().autoIncrement() : c.primaryKey().generatedAlwaysAsIdentity()
      )
      .addColumn("event_id", "text", (c) => c.notNull().unique())
      .addColumn("stream_id", "text", (c) => c.notNull().references("streams.stream_id"))
      .addColumn("stream_version", int, (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("schema_version", "integer", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("metadata", dialect === "sqlite" ? "text" : "jsonb", (c) => c.notNull())
      .addColumn("recorded_at", int, (c) => c.notNull())
      .addColumn("hash", "text", (c) => c.notNull())
      .addUniqueConstraint("events_stream_version_unique", ["stream_id", "stream_version"])
      .modifyEnd(strict)
      .execute()
    if (dialect === "sqlite") {
      await sql`create trigger events_reject_update before update on events
        begin select raise(abort, 'events are append-only: UPDATE rejected'); end`.execute(db)
      await sql`create trigger events_reject_delete before delete on events
        begin select raise(abort, 'events are append-only: DELETE rejected'); end`.execute(db)
    } else {
      await sql`create function ctxlog_reject_event_change() returns trigger language plpgsql as $$
        begin raise exception 'events are append-only: % rejected', tg_op; end $$`.execute(db)
      await sql`create trigger events_reject_update before update on events
        for each row execute function ctxlog_reject_event_change()`.execute(db)
      await sql`create trigger events_reject_delete before delete on events
        for each row execute function ctxlog_reject_event_change()`.execute(db)
      await sql`create trigger events_reject_truncate before truncate on events
        for each statement execute function ctxlog_reject_event_change()`.execute(db)
    }
  }
})

const snapshots = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const int = bigint(dialect)
    await db.schema
      .createTable("snapshots")
      .addColumn("stream_id", "text", (c) => c.notNull())
      .addColumn("projection", "text", (c) => c.notNull())
      .addColumn("projection_version", "integer", (c) => c.notNull())
      .addColumn("stream_version", int, (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("created_at", int, (c) => c.notNull())
      .addPrimaryKeyConstraint("snapshots_pk", ["stream_id", "projection"])
      .modifyEnd(dialect === "sqlite" ? sql`strict` : sql``)
      .execute()
  }
})

const recall = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const int = bigint(dialect)
    const strict = dialect === "sqlite" ? sql`strict` : sql``
    await db.schema
      .createTable("stream_owners")
      .addColumn("stream_id", "text", (c) => c.primaryKey())
      .addColumn("owner", "text", (c) => c.notNull())
      .modifyEnd(strict)
      .execute()
    await db.schema.createIndex("stream_owners_owner").on("stream_owners").column("owner").execute()
    await db.schema
      .createTable("recall_entries")
      .addColumn("entry_id", int, (c) =>
        dialect === "sqlite" ? c.primaryKey().autoIncrement() : c.primaryKey().generatedAlwaysAsIdentity()
      )
      .addColumn("source", "text", (c) => c.notNull())
      .addColumn("stream_id", "text")
      .addColumn("owner", "text")
      .addColumn("ref", "text", (c) => c.notNull())
      .addColumn("document_id", "text")
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("text", "text", (c) => c.notNull())
      .addColumn("tokens", "integer", (c) => c.notNull())
      .addColumn("global_position", int)
      .addColumn("created_at", int, (c) => c.notNull())
      .$call((builder) =>
        dialect === "postgres"
          ? builder.addColumn("tsv", sql`tsvector`, (c) =>
              c.generatedAlwaysAs(sql`to_tsvector('english', "text")`).stored().notNull()
            )
          : builder
      )
      .modifyEnd(strict)
      .execute()
    // A message is indexed once per stream, however often it is re-injected.
    await db.schema
      .createIndex("recall_entries_stream_ref")
      .on("recall_entries")
      .columns(["stream_id", "ref"])
      .unique()
      .execute()
    await db.schema
      .createIndex("recall_entries_owner")
      .on("recall_entries")
      .columns(["owner", "source", "document_id"])
      .execute()
    if (dialect === "sqlite") {
      // Its own content at first (0008 makes it external-content over recall_entries): rows are removed by rowid.
      await sql`create virtual table recall_fts using fts5(text, tokenize = 'porter unicode61')`.execute(db)
    } else {
      await sql`create index recall_entries_tsv on recall_entries using gin (tsv)`.execute(db)
    }
  }
})

const facts = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const int = bigint(dialect)
    await db.schema
      .createTable("facts")
      .addColumn("fact_id", int, (c) =>
        dialect === "sqlite" ? c.primaryKey().autoIncrement() : c.primaryKey().generatedAlwaysAsIdentity()
      )
      .addColumn("stream_id", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("predicate", "text", (c) => c.notNull())
      .addColumn("object", "text", (c) => c.notNull())
      .addColumn("source_message_id", "text")
      .addColumn("global_position", int, (c) => c.notNull())
      .modifyEnd(dialect === "sqlite" ? sql`strict` : sql``)
      .execute()
    await db.schema.createIndex("facts_stream").on("facts").column("stream_id").execute()
  }
})

const snapshotHash = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    // Nullable: a snapshot written before has no hash and is ignored (rebuilt) by its reader.
    await db.schema.alterTable("snapshots").addColumn("state_hash", "text").execute()
  }
})

const projectionCheckpoints = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema
      .createTable("projection_checkpoints")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("position", bigint(dialect), (c) => c.notNull())
      .modifyEnd(dialect === "sqlite" ? sql`strict` : sql``)
      .execute()
    // Until now the recall index was written inside each append: it is complete up to the last event.
    await sql`insert into projection_checkpoints (name, position)
      select 'recall', coalesce(max(global_position), 0) from events`.execute(db)
  }
})

const tenancyErasure = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const int = bigint(dialect)
    const strict = dialect === "sqlite" ? sql`strict` : sql``
    // The audit trail of erasures: one row per erased stream, append-only like the events (it must
    // outlive what it records).
    await db.schema
      .createTable("erasures")
      .addColumn("erasure_id", int, (c) =>
        dialect === "sqlite" ? c.primaryKey().autoIncrement() : c.primaryKey().generatedAlwaysAsIdentity()
      )
      .addColumn("stream_id", "text", (c) => c.notNull())
      .addColumn("owner", "text")
      .addColumn("events", int, (c) => c.notNull())
      .addColumn("last_version", int, (c) => c.notNull())
      .addColumn("head_hash", "text", (c) => c.notNull())
      .addColumn("erased_at", int, (c) => c.notNull())
      .addColumn("actor", "text", (c) => c.notNull())
      .addColumn("reason", "text", (c) => c.notNull())
      .modifyEnd(strict)
      .execute()
    await db.schema.createIndex("erasures_stream").on("erasures").column("stream_id").execute()
    // The streams an erasure transaction is deleting right now: the only rows of `events` a DELETE may
    // remove. The erasure inserts its stream here, deletes, and removes the row before COMMIT, so outside
    // an erasure the table is empty and every DELETE on `events` is still rejected.
    await db.schema
      .createTable("erasure_pending")
      .addColumn("stream_id", "text", (c) => c.primaryKey())
      .modifyEnd(strict)
      .execute()
    if (dialect === "sqlite") {
      await sql`create trigger erasures_reject_update before update on erasures
        begin select raise(abort, 'erasures are append-only: UPDATE rejected'); end`.execute(db)
      await sql`create trigger erasures_reject_delete before delete on erasures
        begin select raise(abort, 'erasures are append-only: DELETE rejected'); end`.execute(db)
      await sql`drop trigger events_reject_delete`.execute(db)
      await sql`create trigger events_reject_delete before delete on events
        when not exists (select 1 from erasure_pending p where p.stream_id = old.stream_id)
        begin select raise(abort, 'events are append-only: DELETE rejected'); end`.execute(db)
    } else {
      await sql`create trigger erasures_reject_update before update on erasures
        for each row execute function ctxlog_reject_event_change()`.execute(db)
      await sql`create trigger erasures_reject_delete before delete on erasures
        for each row execute function ctxlog_reject_event_change()`.execute(db)
      await sql`create trigger erasures_reject_truncate before truncate on erasures
        for each statement execute function ctxlog_reject_event_change()`.execute(db)
      await sql`create function ctxlog_guard_event_delete() returns trigger language plpgsql as $$
        begin
          if exists (select 1 from erasure_pending p where p.stream_id = old.stream_id) then return old; end if;
          raise exception 'events are append-only: DELETE rejected';
        end $$`.execute(db)
      await sql`drop trigger events_reject_delete on events`.execute(db)
      await sql`create trigger events_reject_delete before delete on events
        for each row execute function ctxlog_guard_event_delete()`.execute(db)
    }
  }
})

// The file store: large tool outputs kept once per stream by the SHA-256 of their text, out of the
// events (whose parts hold a preview and the hash). `owner` is the writing store's owner (null for an
// unscoped store), so a tenant reads only its own files; an erasure of the stream deletes them.
const files = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const int = bigint(dialect)
    await db.schema
      .createTable("files")
      .addColumn("stream_id", "text", (c) => c.notNull())
      .addColumn("sha256", "text", (c) => c.notNull())
      .addColumn("owner", "text")
      .addColumn("content", "text", (c) => c.notNull())
      .addColumn("bytes", int, (c) => c.notNull())
      .addColumn("lines", int, (c) => c.notNull())
      .addColumn("created_at", int, (c) => c.notNull())
      .addPrimaryKeyConstraint("files_pk", ["stream_id", "sha256"])
      .modifyEnd(dialect === "sqlite" ? sql`strict` : sql``)
      .execute()
  }
})

/**
 * The SQLite full-text index keeps no copy of the text: an external-content FTS5 table over
 * `recall_entries` (which holds the text already, and which the search joins for everything it returns),
 * where the index's own copy was a third copy of every message after the event and the entry. Rows are
 * still removed by rowid, before their entry (FTS5 reads the entry's text to remove its terms, so the
 * bm25 statistics stay exact). Rebuilt from the entries; PostgreSQL's index (a generated tsvector) is as
 * it was.
 */
const externalContentFts = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    if (dialect !== "sqlite") return
    await sql`drop table recall_fts`.execute(db)
    await sql`create virtual table recall_fts using fts5(text, tokenize = 'porter unicode61', content = 'recall_entries', content_rowid = 'entry_id')`.execute(
      db
    )
    await sql`insert into recall_fts (recall_fts) values ('rebuild')`.execute(db)
  }
})

/**
 * SQLite keeps a snapshot's state deflated, as a BLOB (`snapshotState.ts`, ADR 0058): the STRICT table's
 * TEXT column refuses a BLOB, so the table is rebuilt with an ANY column (rows kept as they are: TEXT
 * states still read). PostgreSQL is as it was.
 */
const snapshotBlob = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    if (dialect !== "sqlite") return
    await sql`create table snapshots_0010 (
      stream_id text not null,
      projection text not null,
      projection_version integer not null,
      stream_version integer not null,
      state any not null,
      created_at integer not null,
      state_hash text,
      constraint snapshots_pk primary key (stream_id, projection)
    ) strict`.execute(db)
    await sql`insert into snapshots_0010 (stream_id, projection, projection_version, stream_version, state, created_at, state_hash)
      select stream_id, projection, projection_version, stream_version, state, created_at, state_hash from snapshots`.execute(
      db
    )
    await sql`drop table snapshots`.execute(db)
    await sql`alter table snapshots_0010 rename to snapshots`.execute(db)
  }
})

/**
 * SQLite keeps a message's text once, in its event (ADR 0072). The full-text index stays an
 * external-content FTS5 table, over the view `recall_text`: a document chunk's text from its entry, a
 * message's from its event, read by the SQL function `ctxlog_message_text` that every connection of the
 * store registers (`registerRecallText`). Deletes still read the old text through the view, so BM25's
 * statistics stay exact. A message entry's own `text` is emptied; the index is rebuilt through the view.
 * PostgreSQL is as it was (its generated tsvector reads the column).
 */
const recallTextOnce = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    if (dialect !== "sqlite") return
    await sql`drop table recall_fts`.execute(db)
    await sql`create view recall_text as
      select e.entry_id as entry_id,
             case when e.source = 'message' and e.text = ''
                  then ctxlog_message_text(ev.type, ev.schema_version, ev.data, e.ref)
                  else e.text end as text
      from recall_entries e
      left join events ev on ev.global_position = e.global_position`.execute(db)
    await sql`update recall_entries set text = '' where source = 'message'`.execute(db)
    await sql`create virtual table recall_fts using fts5(text, tokenize = 'porter unicode61', content = 'recall_text', content_rowid = 'entry_id')`.execute(
      db
    )
    await sql`insert into recall_fts (recall_fts) values ('rebuild')`.execute(db)
  }
})

/**
 * PostgreSQL appends run concurrently (ADR 0066): one function call per append, `ctxlog_append`, which
 * takes the global-read gate in SHARED mode (appends never wait for each other on it; a reader of the
 * whole log takes it exclusively, so it waits for the appends in flight and sees positions only in
 * commit order), checks the stream's head with a compare-and-set on its row (the per-stream lock), the
 * owner and the batch's ids, and writes the stream row and every event. Refused (the head moved, the
 * owner or an id is not as the caller saw it), it writes nothing and returns the head it found, so the
 * caller decides with `checkAppend` and calls again. The gate's key is the one the appends' exclusive
 * lock used before: a process of an older version still excludes every append. SQLite is as it was.
 */
const concurrentAppends = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    if (dialect !== "postgres") return
    await sql`create function ctxlog_append(
        p_stream text, p_current bigint, p_previous text, p_owner text,
        p_ids text[], p_types text[], p_schema_versions int[], p_data text[], p_hashes text[],
        p_metadata jsonb, p_now bigint, p_head text)
      returns table (last_position bigint, version bigint, head_hash text, owner text, located json)
      language plpgsql as $$
      declare
        v_owner text;
        v_next bigint := p_current + cardinality(p_ids);
        v_last bigint;
      begin
        perform pg_advisory_xact_lock_shared(${sql.lit(appendGateKey)});
        select o.owner into v_owner from stream_owners o where o.stream_id = p_stream;
        if (p_owner is null or v_owner = p_owner or (v_owner is null and p_current = 0))
           and not exists (select 1 from events e where e.event_id = any(p_ids)) then
          if p_current = 0 then
            insert into streams as s (stream_id, version, head_hash, created_at, updated_at)
              values (p_stream, v_next, p_head, p_now, p_now)
              on conflict (stream_id) do update
                set version = excluded.version, head_hash = excluded.head_hash, updated_at = excluded.updated_at
                where s.version = 0;
          else
            update streams s set version = v_next, head_hash = p_head, updated_at = p_now
              where s.stream_id = p_stream and s.version = p_current and s.head_hash = p_previous;
          end if;
          if found then
            if p_owner is not null and v_owner is null then
              insert into stream_owners (stream_id, owner) values (p_stream, p_owner) on conflict (stream_id) do nothing;
            end if;
            with written as (
              insert into events
                (event_id, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, hash)
              select u.event_id, p_stream, p_current + u.n, u.type, u.schema_version, u.data, p_metadata, p_now, u.hash
              from unnest(p_ids, p_types, p_schema_versions, p_data, p_hashes)
                with ordinality as u(event_id, type, schema_version, data, hash, n)
              order by u.n
              returning global_position
            )
            select max(w.global_position) into v_last from written w;
            return query select v_last, v_next, p_head, coalesce(v_owner, p_owner), null::json;
            return;
          end if;
        end if;
        return query
          select null::bigint, s.version, s.head_hash,
                 (select o.owner from stream_owners o where o.stream_id = p_stream),
                 (select coalesce(json_agg(json_build_array(e.event_id, e.stream_id, e.stream_version)), '[]'::json)
                    from events e where e.event_id = any(p_ids))
          from (select 1) as one left join streams s on s.stream_id = p_stream;
      end $$`.execute(db)
  }
})

/**
 * SQLite keeps, beside a snapshot's seal (over the JSON text), the SHA-256 of the bytes it stores (the
 * deflated BLOB, about a tenth of the text): a load checks those bytes instead of hashing the text again
 * (ADR 0086). NULL on rows saved before (they are checked by their seal, as before). PostgreSQL stores
 * the text itself and is as it was.
 */
const snapshotStoredHash = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    if (dialect !== "sqlite") return
    await sql`alter table snapshots add column stored_hash text`.execute(db)
  }
})

/**
 * Signed batches (issue 43, ADR 0104): one row per batch a signing writer appended, in the append's
 * transaction: the versions it covers, the writer, the key id and the Ed25519 signature over the
 * batch's event hashes and the hash before them (`Signing.payload`). A new table: logs written before it
 * have none and read as before; an unsigned store never writes one.
 */
const batchSignatures = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const int = bigint(dialect)
    await db.schema
      .createTable("batch_signatures")
      .addColumn("stream_id", "text", (c) => c.notNull())
      .addColumn("first_version", int, (c) => c.notNull())
      .addColumn("last_version", int, (c) => c.notNull())
      .addColumn("writer", "text", (c) => c.notNull())
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("signature", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("batch_signatures_pk", ["stream_id", "first_version"])
      .modifyEnd(dialect === "sqlite" ? sql`strict` : sql``)
      .execute()
  }
})

/** The migrations of one dialect, by name. */
export const migrations = (dialect: Dialect): Record<string, Migration> => ({
  "0001_events": events(dialect),
  "0002_snapshots": snapshots(dialect),
  "0003_recall": recall(dialect),
  "0004_facts": facts(dialect),
  "0005_snapshot_hash": snapshotHash(),
  "0006_projection_checkpoints": projectionCheckpoints(dialect),
  "0007_tenancy_erasure": tenancyErasure(dialect),
  "0008_external_content_fts": externalContentFts(dialect),
  "0009_files": files(dialect),
  "0010_snapshot_blob": snapshotBlob(dialect),
  "0011_concurrent_appends": concurrentAppends(dialect),
  "0012_recall_text_once": recallTextOnce(dialect),
  "0013_snapshot_stored_hash": snapshotStoredHash(dialect),
  "0014_batch_signatures": batchSignatures(dialect),
  "0015_subject_erasure": subjectErasure(dialect),
  "0016_event_positions": eventPositions(dialect)
})

/** Kysely's `MigrationProvider` over the in-code migrations. */
export const provider = (dialect: Dialect): MigrationProvider => ({
  getMigrations: () => Promise.resolve(migrations(dialect))
})
