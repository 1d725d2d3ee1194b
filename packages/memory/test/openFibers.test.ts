// Opening the documented stack (`Ctxlog.sqlite`) makes its parts in one layer's effect, not a tree of
// layers: Effect builds each node of a layer tree with its own fibers and scope, which was about half of
// reopening a small conversation (issue 24, ADR 0073). Counted here as fibers started while the stack is
// built, against the same services composed as a tree of layers.
import { ContextService, Ids, TokenCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Supervisor from "effect/Supervisor"
import { Ctxlog, FullTextRecall, SqliteEventLog } from "../src/index.js"
import { tempFile } from "./support/stores.js"

/** A supervisor that counts the fibers started under it. */
class Counting extends Supervisor.AbstractSupervisor<number> {
  started = 0
  get value() {
    return Effect.sync(() => this.started)
  }
  override onStart() {
    this.started++
  }
}

const fibersToBuild = <A, E>(layer: Layer.Layer<A, E>) =>
  Effect.gen(function* () {
    const counting = new Counting()
    const context = yield* Effect.scoped(Layer.build(layer).pipe(Effect.supervised(counting)))
    return { started: counting.started, context }
  })

describe("opening the documented stack", () => {
  it.effect("starts no fiber per part, and provides what the tree of layers provides", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      const flat = yield* fibersToBuild(Ctxlog.sqlite({ filename }))
      const tree = yield* fibersToBuild(
        ContextService.layer().pipe(
          Layer.provideMerge(FullTextRecall.layer()),
          Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7)),
          Layer.provideMerge(SqliteEventLog.layer({ filename }))
        )
      )
      assert.strictEqual(flat.started, 0)
      assert.isAtLeast(tree.started, 3, "the same services as a tree of layers start fibers to build it")
      assert.deepStrictEqual([...flat.context.unsafeMap.keys()].sort(), [...tree.context.unsafeMap.keys()].sort())
    })
  )
})
