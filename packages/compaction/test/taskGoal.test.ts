import { ContextService, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { TaskGoalRefresh } from "../src/index.js"
import { coreLayer } from "./harness.js"

describe("TaskGoalRefresh", () => {
  it.effect("is two-phase and non-blocking: schedules on a new user message, applies on a later call", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const calls = yield* Ref.make(0)
      const extractor: TaskGoalRefresh.Extractor = {
        ...TaskGoalRefresh.heuristicExtractor,
        goal: (history, current) =>
          Ref.update(calls, (n) => n + 1).pipe(
            Effect.zipRight(Deferred.await(gate)),
            Effect.zipRight(TaskGoalRefresh.heuristicExtractor.goal(history, current))
          )
      }
      yield* Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const refresh = yield* TaskGoalRefresh.TaskGoalRefresh
        yield* ctx.appendMessages("g", [Message.user("Port the parser to Rust\nDetails follow.")])
        // The extraction is blocked on the gate, yet the call returns.
        assert.deepStrictEqual(yield* refresh.maybeRefreshTaskGoal("g"), { applied: false, scheduled: true })
        assert.isNull((yield* ctx.load("g")).taskState.goal)
        // Still running: nothing to apply and nothing new to schedule.
        assert.deepStrictEqual(yield* refresh.maybeRefreshTaskGoal("g"), { applied: false, scheduled: false })
        yield* Deferred.succeed(gate, undefined)
        yield* refresh.settle("g")
        // Same last user message: applied, not scheduled again.
        assert.deepStrictEqual(yield* refresh.maybeRefreshTaskGoal("g"), { applied: true, scheduled: false })
        const window = yield* ctx.load("g")
        assert.strictEqual(window.taskState.goal, "Port the parser to Rust")
        assert.isAbove(window.taskState.goalTokens, 0)
        assert.deepStrictEqual(yield* refresh.maybeRefreshTaskGoal("g"), { applied: false, scheduled: false })
        // An assistant message does not change the hash; a new user message does.
        yield* ctx.appendMessages("g", [Message.assistant("On it.")])
        assert.deepStrictEqual(yield* refresh.maybeRefreshTaskGoal("g"), { applied: false, scheduled: false })
        yield* ctx.appendMessages("g", [Message.user("Actually, port it to Go")])
        assert.deepStrictEqual(yield* refresh.maybeRefreshTaskGoal("g"), { applied: false, scheduled: true })
        yield* refresh.settle("g")
        assert.deepStrictEqual(yield* refresh.maybeRefreshTaskGoal("g"), { applied: true, scheduled: false })
        assert.strictEqual((yield* ctx.load("g")).taskState.goal, "Actually, port it to Go")
        assert.strictEqual(yield* Ref.get(calls), 2)
      }).pipe(Effect.provide(TaskGoalRefresh.layer(extractor).pipe(Layer.provideMerge(coreLayer))))
    })
  )

  it.effect("subgoals come from the last assistant list; a failed extraction is retried", () =>
    Effect.gen(function* () {
      const failures = yield* Ref.make(1)
      const extractor: TaskGoalRefresh.Extractor = {
        ...TaskGoalRefresh.heuristicExtractor,
        subgoals: (history, current) =>
          Effect.flatMap(
            Ref.modify(failures, (n) => [n > 0, Math.max(0, n - 1)] as const),
            (fail) =>
              fail
                ? new TaskGoalRefresh.ExtractionError({ what: "subgoals", detail: "scripted" })
                : TaskGoalRefresh.heuristicExtractor.subgoals(history, current)
          )
      }
      yield* Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const refresh = yield* TaskGoalRefresh.TaskGoalRefresh
        yield* ctx.appendMessages("s", [
          Message.user("Fix the build"),
          Message.assistant("Plan:\n- read the CMake output\n- fix the include path\n1. rerun the tests")
        ])
        assert.isTrue((yield* refresh.maybeRefreshSubgoal("s")).scheduled)
        yield* refresh.settle("s")
        // The failure is dropped and the same message is scheduled again.
        assert.deepStrictEqual(yield* refresh.maybeRefreshSubgoal("s"), { applied: false, scheduled: true })
        yield* refresh.settle("s")
        assert.deepStrictEqual(yield* refresh.maybeRefreshSubgoal("s"), { applied: true, scheduled: false })
        assert.deepStrictEqual((yield* ctx.load("s")).taskState.subgoals, [
          "read the CMake output",
          "fix the include path",
          "rerun the tests"
        ])
      }).pipe(Effect.provide(TaskGoalRefresh.layer(extractor).pipe(Layer.provideMerge(coreLayer))))
    })
  )
})
