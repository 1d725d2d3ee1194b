import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubjectKeys from "../SubjectKeys.js"
import type { Backend } from "./backend.js"

/** The store's own key table (`subject_keys`, migration 0015): data keys wrapped under `master`. */
export const make = (backend: Backend, master: Uint8Array): SubjectKeys.SubjectKeys.Service => {
  const masterId = SubjectKeys.masterKeyId(master)
  const failed = (subject: string) => (error: { readonly message: string }) =>
    new SubjectKeys.SubjectKeyError({ subject, detail: `key table: ${error.message}` })

  // A key created after `after` (ms) is newer than every key before it, even within one millisecond.
  const create = (subject: string, after = 0) =>
    Effect.gen(function* () {
      const key = SubjectKeys.newKey(subject)
      const wrapped = yield* Effect.try({
        try: () => SubjectKeys.wrapKey(master, key),
        catch: (cause) =>
          cause instanceof SubjectKeys.SubjectKeyError
            ? cause
            : new SubjectKeys.SubjectKeyError({ subject, detail: String(cause) })
      })
      yield* Effect.mapError(
        backend.query("store subject key", (db) =>
          db
            .insertInto("subject_keys")
            .values({
              subject,
              key_id: key.keyId,
              master_key_id: masterId,
              wrapped,
              created_at: Math.max(Date.now(), after + 1)
            })
            .execute()
        ),
        failed(subject)
      )
      return key
    })

  const unwrap = (
    subject: string,
    row: { readonly key_id: string; readonly wrapped: string; readonly master_key_id: string }
  ) =>
    row.master_key_id === masterId
      ? SubjectKeys.unwrapKey(master, subject, row.key_id, row.wrapped)
      : Effect.fail(
          new SubjectKeys.SubjectKeyError({
            subject,
            detail: `key ${row.key_id} is wrapped under master key ${row.master_key_id}, the store was opened with ${masterId}`
          })
        )

  return {
    current: (subject) =>
      Effect.gen(function* () {
        yield* SubjectKeys.checkSubject(subject)
        const row = yield* Effect.mapError(
          backend.query("read subject key", (db) =>
            db
              .selectFrom("subject_keys")
              .select(["key_id", "wrapped", "master_key_id"])
              .where("subject", "=", subject)
              .orderBy("created_at", "desc")
              .orderBy("key_id", "desc")
              .executeTakeFirst()
          ),
          failed(subject)
        )
        return row === undefined ? yield* create(subject) : yield* unwrap(subject, row)
      }),
    find: (subject, keyId) =>
      Effect.gen(function* () {
        const row = yield* Effect.mapError(
          backend.query("read subject key", (db) =>
            db
              .selectFrom("subject_keys")
              .select(["key_id", "wrapped", "master_key_id"])
              .where("subject", "=", subject)
              .where("key_id", "=", keyId)
              .executeTakeFirst()
          ),
          failed(subject)
        )
        return row === undefined ? Option.none() : Option.some(yield* unwrap(subject, row))
      }),
    rotate: (subject) =>
      Effect.gen(function* () {
        yield* SubjectKeys.checkSubject(subject)
        const last = yield* Effect.mapError(
          backend.query("read subject key", (db) =>
            db
              .selectFrom("subject_keys")
              .select("created_at")
              .where("subject", "=", subject)
              .orderBy("created_at", "desc")
              .executeTakeFirst()
          ),
          failed(subject)
        )
        return yield* create(subject, last?.created_at ?? 0)
      }),
    destroy: (subject) =>
      Effect.mapError(
        backend.query("destroy subject keys", (db) =>
          db
            .deleteFrom("subject_keys")
            .where("subject", "=", subject)
            .executeTakeFirst()
            .then((result) => Number(result.numDeletedRows))
        ),
        failed(subject)
      )
  }
}
