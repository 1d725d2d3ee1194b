import { EventLog, Validation } from "@ctxlog/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Erasure from "../Erasure.js"
import type { StoreShared } from "./storeShared.js"

/** Erasure of a durable store: a stream's events and everything derived from them, with an audit row. */
export const make = (shared: StoreShared): Erasure.Erasure.Service => {
  const { backend, options, owner: scope, projection } = shared
  const { redactor } = options

  return {
    erase: (stream, request) =>
      Effect.gen(function* () {
        const invalid = (detail: string) => new Erasure.InvalidErasure({ stream: Validation.excerpt(stream), detail })
        const problem = Validation.streamIdProblem(stream)
        if (problem !== undefined) return yield* invalid(`the stream id ${problem}`)
        if (request.actor.trim() === "") return yield* invalid("the actor is blank (say who erases)")
        if (request.reason.trim() === "") return yield* invalid("the reason is blank (say why)")
        const actor = redactor.redact(request.actor)
        const reason = redactor.redact(request.reason)
        // The recall projection must have indexed the stream's last event before the erasure commits;
        // otherwise a batch it read earlier could write the stream's entries back afterwards. A catch-up
        // is quick, and only appends racing the erasure can make it fall behind again.
        for (let attempt = 0; attempt < 8; attempt++) {
          yield* projection.catchUp
          const now = yield* Clock.currentTimeMillis
          const outcome = yield* backend.transact("erase stream", (tx) =>
            tx.eraseStream(stream, { actor, reason, now, owner: scope })
          )
          switch (outcome._tag) {
            case "Erased":
              shared.appendedBytes.forget(stream)
              return outcome.record
            case "Missing":
              return yield* new Erasure.NothingToErase({ stream })
            case "Behind":
              continue
          }
        }
        return yield* new EventLog.StoreError({
          operation: "erase stream",
          detail: `stream "${stream}": the recall index kept falling behind concurrent appends; nothing was erased`
        })
      }),
    erasures: (stream) =>
      backend
        .query("read erasures", (db) => {
          let query = db.selectFrom("erasures").selectAll()
          if (stream !== undefined) query = query.where("stream_id", "=", stream)
          if (scope !== undefined) query = query.where("owner", "=", scope)
          return query.orderBy("erasure_id").execute()
        })
        .pipe(
          Effect.map((rows) =>
            rows.map(
              (row): Erasure.Record => ({
                stream: row.stream_id,
                owner: row.owner ?? undefined,
                events: row.events,
                lastVersion: row.last_version,
                headHash: row.head_hash,
                erasedAt: row.erased_at,
                actor: row.actor,
                reason: row.reason
              })
            )
          )
        )
  }
}
