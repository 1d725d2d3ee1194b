// Issue 11 item 13: the pruning strategies of the source API, and goal/subgoal refresh only under the
// strategies that read them.
import { ContextService, Message, TokenCounter, type Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { TaskGoalRefresh, ToolOutputPruning } from "../src/index.js"
import { stores, storeLayer } from "./support/stores.js"

const repeat = (phrase: string, chars: number) => phrase.repeat(Math.ceil(chars / phrase.length)).slice(0, chars)

/** Four answered tool rounds: o1 on the goal, o2 off-topic, o3 and o4 near-duplicates, partly on the goal. */
const seed = (stream: string, subgoals: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    yield* ctx.setTaskGoal(stream, "fix the date parser leap year bug in the config loader")
    if (subgoals.length > 0) yield* ctx.setSubgoals(stream, subgoals)
    const outputs = {
      o1: repeat("date parser leap year february handling ", 1200),
      o2: repeat("network socket timeout packets dropped retry ", 1200),
      o3: repeat("config loader yaml settings values merged ", 1200),
      o4: `${repeat("config loader yaml settings values merged ", 1190)} (again)`
    }
    for (const [id, content] of Object.entries(outputs)) {
      yield* ctx.appendMessages(stream, [
        Message.user(`look at ${id}`),
        Message.assistant("", [Message.toolCall(id, "cat", { path: `${id}.txt` })]),
        Message.tool(id, content),
        Message.assistant(`read ${id}`)
      ])
    }
    return yield* ctx.load(stream)
  })

const stubbed = (window: Window.Window, strategy: ToolOutputPruning.Strategy, targetTokens?: number) =>
  Effect.map(TokenCounter.TokenCounter, (counter) =>
    (
      ToolOutputPruning.plan(
        window,
        { strategy, keepRecent: 0, ...(targetTokens === undefined ? {} : { targetTokens }) },
        counter.countMessage
      ) ?? []
    )
      .filter((output) => output.content.startsWith(ToolOutputPruning.stubPrefix))
      .map((output) => output.toolCallId)
  )

for (const store of stores) {
  describe(`pruning strategies on ${store.name} (issue 11 item 13)`, () => {
    it.effect("with room for all but one output, each strategy picks its own first victim", () =>
      Effect.gen(function* () {
        const window = yield* seed("st", ["inspect the network socket timeout"])
        // Ten tokens under the current total: exactly one stub is needed.
        const target = window.tokens.total - 10
        assert.deepStrictEqual(yield* stubbed(window, "Default", target), ["o1"])
        // Least relevant to the goal: the network output.
        assert.deepStrictEqual(yield* stubbed(window, "TaskAware", target), ["o2"])
        // Least marginal gain: o3 repeats the newer o4.
        assert.deepStrictEqual(yield* stubbed(window, "Mig", target), ["o3"])
        // The active subgoal protects o2; otherwise oldest first / Mig order.
        assert.deepStrictEqual(yield* stubbed(window, "Subgoal", target), ["o1"])
        assert.deepStrictEqual(yield* stubbed(window, "SubgoalMig", target), ["o3"])
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("Subgoal strategies never prune the active subgoal's outputs; the others prune every old output", () =>
      Effect.gen(function* () {
        const window = yield* seed("sp", ["inspect the network socket timeout"])
        for (const strategy of ["Default", "TaskAware", "Mig"] as const) {
          assert.deepStrictEqual([...(yield* stubbed(window, strategy))].sort(), ["o1", "o2", "o3", "o4"], strategy)
        }
        for (const strategy of ["Subgoal", "SubgoalMig"] as const) {
          assert.deepStrictEqual([...(yield* stubbed(window, strategy))].sort(), ["o1", "o3", "o4"], strategy)
        }
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("goal and subgoal refresh run only under the strategies that read them", () =>
      Effect.gen(function* () {
        const calls = yield* Ref.make<ReadonlyArray<string>>([])
        const extractor: TaskGoalRefresh.Extractor = {
          goal: (history, current) =>
            Ref.update(calls, (all) => [...all, "goal"]).pipe(
              Effect.zipRight(TaskGoalRefresh.heuristicExtractor.goal(history, current))
            ),
          subgoals: (history, current) =>
            Ref.update(calls, (all) => [...all, "subgoals"]).pipe(
              Effect.zipRight(TaskGoalRefresh.heuristicExtractor.subgoals(history, current))
            )
        }
        yield* Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const refresh = yield* TaskGoalRefresh.TaskGoalRefresh
          const expected: ReadonlyArray<readonly [ToolOutputPruning.Strategy, ReadonlyArray<string>]> = [
            ["Default", []],
            ["TaskAware", ["goal"]],
            ["Mig", ["goal"]],
            ["Subgoal", ["subgoals"]],
            ["SubgoalMig", ["goal", "subgoals"]]
          ]
          for (const [strategy, wanted] of expected) {
            const stream = `r-${strategy}`
            yield* ctx.appendMessages(stream, [Message.user("Fix the build"), Message.assistant("Plan:\n- read logs")])
            yield* Ref.set(calls, [])
            const result = yield* refresh.maybeRefreshFor(stream, strategy)
            yield* refresh.settle(stream)
            assert.deepStrictEqual([...(yield* Ref.get(calls))].sort(), [...wanted], strategy)
            assert.strictEqual(result.goal === null, !wanted.includes("goal"), strategy)
            assert.strictEqual(result.subgoals === null, !wanted.includes("subgoals"), strategy)
          }
        }).pipe(Effect.provide(TaskGoalRefresh.layer(extractor).pipe(Layer.provideMerge(storeLayer(store)))))
      })
    )
  })
}
