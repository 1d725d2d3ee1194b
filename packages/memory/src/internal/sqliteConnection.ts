import { EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Scope from "effect/Scope"

// Who may use a store's one SQLite connection when (ADR 0158), in the manner of @effect/sql's SQLite
// clients (a semaphore-backed `transactionAcquirer` holding the connection for a transaction's scope).
// A transaction holds the connection from BEGIN to COMMIT or ROLLBACK, so its body may be any effect, even
// one that yields, and no other fiber's statement lands inside it (where a read would see uncommitted rows,
// and an append be rolled back with it). Outside transactions, appends (one synchronous block each) and
// reads (kysely queries, which wait on promises) go on as before, side by side. Two semaphores give that:
// - the turnstile (one permit): a transaction holds it for its whole scope, an append for its block, and a
//   read takes it only to pass (so a waiting transaction is not starved by a stream of reads);
// - the readers (many permits): a read holds one while it runs; a transaction takes them all, so it begins
//   once the reads in flight have ended.
// Inside a transaction the fiber's reads join it (they run on the held connection and see its writes);
// opening a second transaction, or appending, is refused with a `StoreError` (it would wait for itself).

/** The connection's gate. */
export interface Connection {
  /** Run an append's block when no transaction is open; inside a transaction, refused. */
  readonly writing: <A, E>(operation: string, effect: Effect.Effect<A, E>) => Effect.Effect<A, E | EventLog.StoreError>
  /** Run a read when no transaction is open; inside a transaction, on the transaction's connection (joined). */
  readonly reading: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /**
   * Run a transaction, `scoped` (its BEGIN acquired and its ROLLBACK released in the scope), with the
   * connection held until the scope has closed; inside a transaction, refused.
   */
  readonly transaction: <A, E>(
    operation: string,
    scoped: Effect.Effect<A, E, Scope.Scope>
  ) => Effect.Effect<A, E | EventLog.StoreError>
}

/** More reads than can be in flight at once: a transaction takes them all. */
const readerPermits = 2 ** 30

/** A connection's gate, for the life of the scope. */
export const make: Effect.Effect<Connection, never, Scope.Scope> = Effect.gen(function* () {
  const turnstile = yield* Effect.makeSemaphore(1)
  const readers = yield* Effect.makeSemaphore(readerPermits)
  /** Whether the fiber runs inside a transaction of this connection (inherited by fibers it forks). */
  const inside = yield* FiberRef.make(false)
  // Take permits (interruptible while waiting) and give them back when the transaction's scope closes.
  const hold = (semaphore: Effect.Semaphore, permits: number) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(
        restore(semaphore.take(permits)),
        Effect.flatMap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(permits)))
      )
    )
  const held = Effect.zipRight(hold(turnstile, 1), hold(readers, readerPermits))
  const refused = (operation: string) =>
    new EventLog.StoreError({
      operation,
      detail:
        "refused inside a write transaction on the same connection (a transaction's body neither opens another nor appends)"
    })
  return {
    writing: <A, E>(operation: string, effect: Effect.Effect<A, E>) =>
      FiberRef.getWith(
        inside,
        (within): Effect.Effect<A, E | EventLog.StoreError> =>
          within ? Effect.fail(refused(operation)) : turnstile.withPermits(1)(effect)
      ),
    reading: <A, E>(effect: Effect.Effect<A, E>) =>
      FiberRef.getWith(
        inside,
        (within): Effect.Effect<A, E> =>
          within
            ? effect
            : Effect.acquireUseRelease(
                turnstile.withPermits(1)(readers.take(1)),
                () => effect,
                () => readers.release(1)
              )
      ),
    transaction: <A, E>(operation: string, scoped: Effect.Effect<A, E, Scope.Scope>) =>
      FiberRef.getWith(
        inside,
        (within): Effect.Effect<A, E | EventLog.StoreError> =>
          within
            ? Effect.fail(refused(operation))
            : Effect.scoped(Effect.zipRight(held, Effect.locally(scoped, inside, true)))
      )
  }
})
