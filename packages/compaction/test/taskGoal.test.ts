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

  it.effect(
    "issue 25 item 7: the gate is in the functions: goal only under TaskAware/Mig/SubgoalMig, subgoals only under Subgoal/SubgoalMig",
    () =>
      Effect.gen(function* () {
        const goals = yield* Ref.make(0)
        const subgoals = yield* Ref.make(0)
        const extractor: TaskGoalRefresh.Extractor = {
          goal: (history, current) =>
            Effect.zipRight(
              Ref.update(goals, (n) => n + 1),
              TaskGoalRefresh.heuristicExtractor.goal(history, current)
            ),
          subgoals: (history, current) =>
            Effect.zipRight(
              Ref.update(subgoals, (n) => n + 1),
              TaskGoalRefresh.heuristicExtractor.subgoals(history, current)
            )
        }
        const counts = Effect.all([Ref.get(goals), Ref.get(subgoals)])
        // Made for Default: neither runs (no extraction, no event), whatever the stream holds.
        yield* Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const refresh = yield* TaskGoalRefresh.TaskGoalRefresh
          yield* ctx.appendMessages("d", [Message.user("Ship the release"), Message.assistant("- tag\n- publish")])
          const before = (yield* ctx.load("d")).version
          assert.deepStrictEqual(yield* refresh.maybeRefreshTaskGoal("d"), { applied: false, scheduled: false })
          assert.deepStrictEqual(yield* refresh.maybeRefreshSubgoal("d"), { applied: false, scheduled: false })
          yield* refresh.settle("d")
          assert.deepStrictEqual(yield* counts, [0, 0])
          assert.strictEqual((yield* ctx.load("d")).version, before)
          // A call's own strategy wins over the refresher's.
          for (const strategy of ["TaskAware", "Mig", "Subgoal", "SubgoalMig"] as const) {
            const stream = `s-${strategy}`
            yield* ctx.appendMessages(stream, [
              Message.user(`Goal under ${strategy}`),
              Message.assistant("- one\n- two")
            ])
            const goal = yield* refresh.maybeRefreshTaskGoal(stream, strategy)
            const sub = yield* refresh.maybeRefreshSubgoal(stream, strategy)
            assert.deepStrictEqual(
              [goal.scheduled, sub.scheduled],
              [strategy !== "Subgoal", strategy === "Subgoal" || strategy === "SubgoalMig"],
              strategy
            )
            yield* refresh.settle(stream)
          }
          assert.deepStrictEqual(yield* counts, [3, 2])
        }).pipe(
          Effect.provide(TaskGoalRefresh.layer(extractor, { strategy: "Default" }).pipe(Layer.provideMerge(coreLayer)))
        )
        // Made without a strategy: both run, as before.
        yield* Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const refresh = yield* TaskGoalRefresh.TaskGoalRefresh
          yield* ctx.appendMessages("u", [Message.user("Write the docs"), Message.assistant("- intro")])
          assert.isTrue((yield* refresh.maybeRefreshTaskGoal("u")).scheduled)
          assert.isTrue((yield* refresh.maybeRefreshSubgoal("u")).scheduled)
          assert.deepStrictEqual((yield* refresh.maybeRefreshTaskGoal("u", "Default")).scheduled, false)
          yield* refresh.settle("u")
          assert.deepStrictEqual(yield* counts, [4, 3])
        }).pipe(Effect.provide(TaskGoalRefresh.layer(extractor).pipe(Layer.provideMerge(coreLayer))))
      })
  )
})
