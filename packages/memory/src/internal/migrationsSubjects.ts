import { type Kysely, type Migration, sql } from "kysely"
import type { Dialect } from "./schema.js"

/**
 * Per-subject erasure (issue 43, items 3-5; ADR 0112): the store's key table and the erasure receipts.
 * `subject_keys` holds each subject's data keys wrapped under the caller's master key (`SubjectKeys`);
 * destroying a subject deletes its rows. `subject_erasures` keeps every signed receipt, append-only like
 * `erasures`. New tables only: a log written before them has neither and reads as before.
 */
export const subjectErasure = (dialect: Dialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    const int = dialect === "sqlite" ? "integer" : "bigint"
    const strict = dialect === "sqlite" ? sql`strict` : sql``
    await db.schema
      .createTable("subject_keys")
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("master_key_id", "text", (c) => c.notNull())
      .addColumn("wrapped", "text", (c) => c.notNull())
      .addColumn("created_at", int, (c) => c.notNull())
      .addPrimaryKeyConstraint("subject_keys_pk", ["subject", "key_id"])
      .modifyEnd(strict)
      .execute()
    await db.schema
      .createTable("subject_erasures")
      .addColumn("erasure_id", int, (c) =>
        dialect === "sqlite" ? c.primaryKey().autoIncrement() : c.primaryKey().generatedAlwaysAsIdentity()
      )
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("erased_at", int, (c) => c.notNull())
      .addColumn("receipt", "text", (c) => c.notNull())
      .modifyEnd(strict)
      .execute()
    if (dialect === "sqlite") {
      await sql`create trigger subject_erasures_reject_update before update on subject_erasures
        begin select raise(abort, 'subject_erasures are append-only: UPDATE rejected'); end`.execute(db)
      await sql`create trigger subject_erasures_reject_delete before delete on subject_erasures
        begin select raise(abort, 'subject_erasures are append-only: DELETE rejected'); end`.execute(db)
    } else {
      await sql`create trigger subject_erasures_reject_update before update on subject_erasures
        for each row execute function ctxlog_reject_event_change()`.execute(db)
      await sql`create trigger subject_erasures_reject_delete before delete on subject_erasures
        for each row execute function ctxlog_reject_event_change()`.execute(db)
    }
  }
})
