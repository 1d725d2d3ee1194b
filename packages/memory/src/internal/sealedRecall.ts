import * as Effect from "effect/Effect"
import type * as RecallIndex from "../RecallIndex.js"
import * as Sealing from "../Sealing.js"
import type { Backend } from "./backend.js"

/**
 * The recall index of a sealing store (ADR 0139). The index holds a sealed message's plaintext (opened
 * when it was indexed, removed by `SubjectErasure` before the key is destroyed), so a search finds it. A
 * hit is what a caller injects into the stream it asked for, and that injection is appended in clear
 * unless the stream's own subject seals it: so a hit from a sealed event (or a fact) is returned only to
 * a stream whose subject (`subjectOf`) is every subject the event was sealed under. A search of an owner
 * without `except`, or facts of an owner, name no receiving stream and get no sealed hit.
 */
export const make = (
  inner: RecallIndex.RecallIndex.Service,
  backend: Backend,
  subjectOf: (stream: string) => string | undefined
): RecallIndex.RecallIndex.Service => {
  // The subjects of the sealed events at these positions (one read per search; none when nothing is sealed).
  const sealedAt = (positions: ReadonlyArray<number>) =>
    positions.length === 0
      ? Effect.succeed(new Map<number, ReadonlyArray<string>>())
      : Effect.map(
          backend.query("read sealed hits", (db) =>
            db
              .selectFrom("events")
              .select(["global_position", "data"])
              .where("global_position", "in", [...new Set(positions)])
              .where("data", "like", `%${Sealing.prefix}%`)
              .execute()
          ),
          (rows) => new Map(rows.map((row) => [row.global_position, Sealing.subjectsIn(row.data)]))
        )

  const receivable = (subjects: ReadonlyArray<string> | undefined, receiver: string | undefined): boolean => {
    if (subjects === undefined) return true
    const own = receiver === undefined ? undefined : subjectOf(receiver)
    return own !== undefined && subjects.every((subject) => subject === own)
  }

  const receiverOf = (scope: RecallIndex.SearchScope): string | undefined =>
    scope._tag === "Stream" ? scope.stream : scope._tag === "Owner" ? scope.except : undefined

  const filterEach = (
    requests: ReadonlyArray<RecallIndex.SearchRequest>,
    each: ReadonlyArray<ReadonlyArray<RecallIndex.SearchHit>>
  ) =>
    Effect.map(
      sealedAt(each.flatMap((hits) => hits.flatMap((hit) => (hit.position === undefined ? [] : [hit.position])))),
      (sealed) =>
        each.map((hits, at) => {
          const request = requests[at]
          const receiver = request === undefined ? undefined : receiverOf(request.scope)
          return hits.filter((hit) =>
            receivable(hit.position === undefined ? undefined : sealed.get(hit.position), receiver)
          )
        })
    )

  return {
    ...inner,
    search: (request) =>
      Effect.flatMap(inner.search(request), (hits) =>
        Effect.map(filterEach([request], [hits]), (each) => each[0] ?? [])
      ),
    searchEach: (requests) => Effect.flatMap(inner.searchEach(requests), (each) => filterEach(requests, each)),
    factsFor: (scope, text, limit) =>
      Effect.flatMap(inner.factsFor(scope, text, limit), (facts) =>
        Effect.map(sealedAt(facts.map((fact) => fact.position)), (sealed) =>
          facts.filter((fact) =>
            receivable(sealed.get(fact.position), scope._tag === "Stream" ? scope.stream : undefined)
          )
        )
      )
  }
}
