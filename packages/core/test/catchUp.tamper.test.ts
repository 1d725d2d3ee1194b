// The catch-up of a window cached in ContextService, over the replaying repository (what `Ctxlog.memory`
// uses): each new event is checked against the chain from the hash kept beside the cached window. The
// log is the in-memory one behind a Layer that can serve one event edited (what a rewritten database
// row looks like to a reader); the durable backends are tested in packages/memory.
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import {
  ContextService,
  EventHash,
  EventLog,
  Ids,
  Message,
  RecallSource,
  TokenCounter,
  WindowRepository
} from "../src/index.js"

/** Which version the double serves edited, if any (and whether it re-hashes it, unkeyed). */
class Edit extends Context.Tag("test/Edit")<
  Edit,
  Ref.Ref<{ readonly version: number; readonly rehash: boolean } | undefined>
>() {}

const editLayer = Layer.effect(
  Edit,
  Ref.make<{ readonly version: number; readonly rehash: boolean } | undefined>(undefined)
)

/**
 * The in-memory log (keyed when `hmacKey`), whose reads serve the event chosen by `Edit` with its text
 * changed, and, with `rehash`, its link recomputed unkeyed from the stored hash before it.
 */
const editingLog = (hmacKey: EventHash.ChainKey | undefined) =>
  Layer.effect(
    EventLog.EventLog,
    Effect.gen(function* () {
      const edit = yield* Edit
      const inner = yield* Effect.provide(EventLog.EventLog, EventLog.layerMemory({ hmacKey }))
      const read: EventLog.EventLog.Service["read"] = (stream, options) =>
        Stream.mapEffect(inner.read(stream, options), (envelope) =>
          Effect.gen(function* () {
            const chosen = yield* Ref.get(edit)
            if (chosen === undefined || envelope.version !== chosen.version) return envelope
            const data = envelope.data.replaceAll("honest", "FORGED")
            const event =
              envelope.event._tag === "MessageAppended"
                ? { ...envelope.event, message: { ...envelope.event.message, parts: [Message.text("FORGED")] } }
                : envelope.event
            const edited = { ...envelope, data, event }
            if (!chosen.rehash) return edited
            const before = yield* Stream.runHead(
              inner.read(stream, { from: envelope.version - 1, to: envelope.version - 1 })
            )
            const previous = Option.match(before, { onNone: () => EventHash.genesis, onSome: (head) => head.hash })
            return { ...edited, hash: EventHash.chain(previous, edited) }
          })
        )
      return { ...inner, read }
    })
  )

const live = (options: WindowRepository.IntegrityOptions = {}) =>
  ContextService.layer().pipe(
    Layer.provideMerge(WindowRepository.layerReplay(options)),
    Layer.provideMerge(editingLog(options.hmacKey)),
    Layer.provideMerge(editLayer),
    Layer.provideMerge(
      Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerSequential("id"), RecallSource.layerEmpty)
    )
  )

const stream = "conversation"

/** This process caches the window at version 2; another writer appends version 3; then it is edited. */
const cachedThenEdited = (rehash: boolean) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const log = yield* EventLog.EventLog
    yield* ctx.appendMessages(stream, [Message.user("one")])
    yield* ctx.appendMessages(stream, [Message.assistant("two")])
    yield* log.append(
      stream,
      [
        {
          _tag: "MessageAppended",
          id: "other-1",
          message: { id: "m-other", role: "user", kind: "chat", parts: [Message.text("honest three")], tokens: 7 }
        }
      ],
      2
    )
    yield* Ref.set(yield* Edit, { version: 3, rehash })
    return ctx
  })

const expectTamper = (result: Either.Either<unknown, { readonly _tag: string }>, version: number) => {
  assert.isTrue(Either.isLeft(result), "the operation must fail")
  if (Either.isLeft(result)) {
    assert.strictEqual(result.left._tag, "TamperDetected")
    if (result.left._tag === "TamperDetected" && "version" in result.left && "stream" in result.left) {
      assert.strictEqual(result.left.version, version)
      assert.strictEqual(result.left.stream, stream)
    }
  }
}

describe("ContextService catch-up over the replaying repository", () => {
  it.effect("an edited new event (hash left) fails the next load at its version", () =>
    Effect.gen(function* () {
      const ctx = yield* cachedThenEdited(false)
      expectTamper(yield* Effect.either(ctx.load(stream)), 3)
    }).pipe(Effect.provide(live()))
  )

  it.effect("keyed: an edited new event re-hashed without the key fails the next append at its version", () =>
    Effect.gen(function* () {
      const ctx = yield* cachedThenEdited(true)
      expectTamper(yield* Effect.either(ctx.appendMessages(stream, [Message.user("four")])), 3)
    }).pipe(Effect.provide(live({ hmacKey: "core catch-up key" })))
  )

  it.effect("unverified: the catch-up serves the edit", () =>
    Effect.gen(function* () {
      const ctx = yield* cachedThenEdited(false)
      const window = yield* ctx.load(stream)
      assert.strictEqual(window.version, 3)
      assert.include(JSON.stringify(window.history), "FORGED")
    }).pipe(Effect.provide(live({ integrity: "unverified" })))
  )

  it.effect("honest: the catch-up serves the other writer's event", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const log = yield* EventLog.EventLog
      yield* ctx.appendMessages(stream, [Message.user("one")])
      yield* log.append(
        stream,
        [
          {
            _tag: "MessageAppended",
            id: "other-1",
            message: { id: "m-other", role: "user", kind: "chat", parts: [Message.text("honest two")], tokens: 7 }
          }
        ],
        1
      )
      const window = yield* ctx.load(stream)
      assert.strictEqual(window.version, 2)
      assert.include(JSON.stringify(window.history), "honest two")
    }).pipe(Effect.provide(live({ hmacKey: "core catch-up key" })))
  )
})
