import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { ContextService, EventLog, Message, RecallSource, Window, type WindowEvent } from "../src/index.js"
import {
  appended,
  checkConsistent,
  conversation,
  given,
  idsOf,
  live,
  logState,
  message,
  stampAll,
  stream,
  textTokens,
  thenEvents,
  withoutId,
  written
} from "./Scenario.js"

const systemPrompt = message("sys", "system", "You are terse.", { tokens: 8 })

/** The failure of `effect`; a success fails the test with a short message (not the whole outcome). */
const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.either(effect), (result) =>
    Either.isLeft(result)
      ? Effect.succeed(result.left)
      : Effect.sync(() => assert.fail("expected a failure, got a success"))
  )

/** Run `effect`, expect an `InvalidCommand` about `messageId`, and check the log did not move. */
const expectInvalid = <A, E extends { readonly _tag: string }>(
  effect: Effect.Effect<A, E, ContextService.ContextService | EventLog.EventLog>,
  messageId: string | undefined,
  detail: RegExp
) =>
  Effect.gen(function* () {
    const before = yield* logState
    const error = yield* failureOf(effect)
    assert.strictEqual(error._tag, "InvalidCommand")
    if (!("detail" in error) || typeof error.detail !== "string") return assert.fail("not an InvalidCommand")
    assert.match(error.detail, detail)
    assert.strictEqual("messageId" in error ? error.messageId : undefined, messageId)
    assert.deepStrictEqual(yield* logState, before)
  })

const service = ContextService.ContextService

describe("ContextService", () => {
  describe("setSystemPrompt", () => {
    it.effect("sets the system partition from a string", () =>
      Effect.gen(function* () {
        const ctx = yield* service
        const out = yield* ctx.setSystemPrompt(stream, "You are terse.")
        const prompt: Message.Message = {
          id: "id-000001",
          role: "system",
          kind: "chat",
          parts: [Message.text("You are terse.")],
          tokens: textTokens("You are terse.")
        }
        thenEvents(out, [{ _tag: "SystemPromptSet", messages: [prompt] }])
        assert.deepStrictEqual(out.window.system, [{ ...prompt, origin: { version: 1, eventId: "id-000002" } }])
        assert.strictEqual(out.window.tokens.system, textTokens("You are terse."))
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("replaces the previous prompt and keeps history", () =>
      Effect.gen(function* () {
        yield* given([{ _tag: "SystemPromptSet", messages: [systemPrompt] }, appended(message("u1", "user", "hi"))])
        const ctx = yield* service
        const out = yield* ctx.setSystemPrompt(stream, [Message.system("Rules."), Message.system("More rules.")])
        assert.deepStrictEqual(out.window.system.map(Message.textOf), ["Rules.", "More rules."])
        assert.deepStrictEqual(idsOf(out.window.history), ["u1"])
        assert.strictEqual(out.window.tokens.system, textTokens("Rules.") + textTokens("More rules."))
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("rejects a prompt with a tool call, an id taken by history, or a repeated id", () =>
      Effect.gen(function* () {
        yield* given([appended(message("u1", "user", "hi"))])
        const ctx = yield* service
        yield* expectInvalid(
          ctx.setSystemPrompt(stream, [{ id: "p1", role: "system", parts: [Message.toolCall("c1", "ls", null)] }]),
          "p1",
          /cannot carry tool calls/
        )
        yield* expectInvalid(
          ctx.setSystemPrompt(stream, [{ ...Message.system("x"), id: "u1" }]),
          "u1",
          /already in the window/
        )
        yield* expectInvalid(
          ctx.setSystemPrompt(stream, [
            { ...Message.system("x"), id: "p1" },
            { ...Message.system("y"), id: "p1" }
          ]),
          "p1",
          /already in the window/
        )
      }).pipe(Effect.provide(live()))
    )
  })

  describe("setKnowledge", () => {
    it.effect("replaces the stable knowledge and keeps injected context after it", () =>
      Effect.gen(function* () {
        yield* given([
          { _tag: "SystemPromptSet", messages: [systemPrompt] },
          { _tag: "KnowledgeSet", messages: [message("k0", "system", "old knowledge")] },
          {
            _tag: "MessagesInjected",
            kind: "recall",
            messages: [message("r1", "system", "recalled", { kind: "recall" })],
            replacesInHistory: false
          }
        ])
        const ctx = yield* service
        const out = yield* ctx.setKnowledge(stream, ["skill: grep", Message.system("artifact: notes")])
        assert.strictEqual(out.events.length, 1)
        assert.deepStrictEqual(out.window.knowledge.map(Message.textOf), ["skill: grep", "artifact: notes", "recalled"])
        assert.deepStrictEqual(
          out.window.knowledge.map((item) => item.kind),
          ["chat", "chat", "recall"]
        )
        assert.strictEqual(out.window.tokens.knowledge, textTokens("skill: grep") + textTokens("artifact: notes") + 10)
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("setKnowledge rejections", () => {
    it.effect("rejects knowledge of an injected kind, which a later setKnowledge could not replace", () =>
      Effect.gen(function* () {
        const ctx = yield* service
        yield* expectInvalid(
          ctx.setKnowledge(stream, [{ ...Message.system("x"), id: "k1", kind: "recall" }]),
          "k1",
          /cannot be of kind "recall"/
        )
      }).pipe(Effect.provide(live()))
    )
  })

  describe("run", () => {
    it.effect("a decision's own error comes back typed and nothing is written", () =>
      Effect.gen(function* () {
        yield* given([appended(message("u1", "user", "hi"))])
        const ctx = yield* service
        const before = yield* logState
        const error = yield* failureOf(ctx.run(stream, () => Either.left({ _tag: "PolicyRefused" as const })))
        assert.deepStrictEqual(error, { _tag: "PolicyRefused" })
        assert.deepStrictEqual(yield* logState, before)
      }).pipe(Effect.provide(live()))
    )

    it.effect("concurrent writers at one version both land: the loser re-decides on the new window", () =>
      Effect.gen(function* () {
        yield* given([appended(message("a1", "assistant", [Message.toolCall("c1", "ls", null)]))])
        const ctx = yield* service
        const outcomes = yield* Effect.all(
          Array.from({ length: 6 }, (_, index) => ctx.appendMessages(stream, [Message.user(`writer ${index}`)])),
          { concurrency: "unbounded" }
        )
        const window = yield* ctx.load(stream)
        assert.strictEqual(window.version, 7)
        assert.strictEqual(new Set(outcomes.map((outcome) => outcome.window.version)).size, 6)
        assert.sameMembers(
          window.history.slice(1).map(Message.textOf),
          Array.from({ length: 6 }, (_, index) => `writer ${index}`)
        )
        yield* checkConsistent({ window, events: [] })
        // Two writers answering the same call: one wins, the other re-decides and is refused.
        const answers = yield* Effect.all(
          [
            ctx.appendMessages(stream, [Message.tool("c1", "one")]),
            ctx.appendMessages(stream, [Message.tool("c1", "two")])
          ],
          { concurrency: "unbounded", mode: "either" }
        )
        assert.deepStrictEqual(answers.map((answer) => (Either.isLeft(answer) ? answer.left._tag : "ok")).sort(), [
          "InvalidCommand",
          "ok"
        ])
        assert.deepStrictEqual((yield* ctx.load(stream)).completedToolIds, ["c1"])
      }).pipe(Effect.provide(live()))
    )
  })

  describe("task state and signals", () => {
    it.effect(
      "setTaskGoal and setSubgoals count the task state as rendered; a null goal counts nothing (issue 11 item 10)",
      () =>
        Effect.gen(function* () {
          const ctx = yield* service
          const count = (text: string) => Math.ceil(text.length / 4)
          const goal = yield* ctx.setTaskGoal(stream, "ship the release")
          // "<task_state>\ngoal: ship the release\n</task_state>" and its separating newline: 50 characters.
          thenEvents(goal, [{ _tag: "TaskGoalSet", goal: "ship the release", tokens: 13 }])
          const subgoals = yield* ctx.setSubgoals(stream, ["tag it", "write notes"])
          // The whole block (86 characters, 22 tokens) less the goal's share.
          thenEvents(subgoals, [{ _tag: "SubgoalsSet", subgoals: ["tag it", "write notes"], tokens: 22 - 13 }])
          assert.deepStrictEqual(subgoals.window.taskState, {
            goal: "ship the release",
            goalTokens: 13,
            subgoals: ["tag it", "write notes"],
            subgoalTokens: 9
          })
          assert.strictEqual(
            subgoals.window.tokens.taskState,
            // The block and the newline that separates it from the signals.
            count(`${Window.renderTaskState("ship the release", ["tag it", "write notes"])}\n`)
          )
          const cleared = yield* ctx.setTaskGoal(stream, null)
          // The goal's share goes; the subgoals' share becomes the whole block without the goal line.
          thenEvents(cleared, [
            { _tag: "TaskGoalSet", goal: null, tokens: 0 },
            { _tag: "SubgoalsSet", subgoals: ["tag it", "write notes"], tokens: 16 }
          ])
          assert.strictEqual(cleared.window.taskState.goal, null)
          assert.strictEqual(
            cleared.window.tokens.taskState,
            count(`${Window.renderTaskState(null, ["tag it", "write notes"])}\n`)
          )
          yield* checkConsistent(cleared)
        }).pipe(Effect.provide(live()))
    )

    it.effect("raiseSignal adds an ephemeral note that a PromptRendered event clears", () =>
      Effect.gen(function* () {
        const ctx = yield* service
        yield* ctx.raiseSignal(stream, "disk almost full")
        const raised = yield* ctx.raiseSignal(stream, "user is waiting")
        // Counted as rendered: the first signal carries the `<signals>` wrapper (10), the second its line (5).
        thenEvents(raised, [{ _tag: "SignalRaised", signal: { id: "id-000003", text: "user is waiting", tokens: 5 } }])
        assert.deepStrictEqual(
          raised.window.signals.map((signal) => signal.text),
          ["disk almost full", "user is waiting"]
        )
        assert.strictEqual(raised.window.tokens.signals, 15)
        const rendered = yield* ctx.run(stream, (window) =>
          Either.right([
            { _tag: "PromptRendered", provider: "openai", model: "gpt-test", tokens: window.tokens, sha256: "ab" }
          ] as const)
        )
        assert.deepStrictEqual(rendered.window.signals, [])
        assert.strictEqual(rendered.window.tokens.signals, 0)
        assert.strictEqual(rendered.window.tokens.total, 0)
        yield* checkConsistent(rendered)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("appendMessages", () => {
    it.effect("appends turns with a tool call and its result", () =>
      Effect.gen(function* () {
        yield* given([{ _tag: "SystemPromptSet", messages: [systemPrompt] }])
        const ctx = yield* service
        const out = yield* ctx.appendMessages(stream, [
          Message.user("list the files"),
          Message.assistant("", [Message.toolCall("c1", "ls", { path: "." })]),
          Message.tool("c1", "a.txt"),
          { ...Message.assistant("two files"), id: "mine" }
        ])
        assert.deepStrictEqual(
          out.events.map((event) => event._tag),
          ["MessageAppended", "MessageAppended", "MessageAppended", "MessageAppended"]
        )
        assert.deepStrictEqual(idsOf(out.window.history), ["id-000001", "id-000002", "id-000003", "mine"])
        assert.deepStrictEqual(out.window.completedToolIds, ["c1"])
        assert.deepStrictEqual(
          out.window.history.map((item) => item.tokens),
          [textTokens("list the files"), textTokens('ls {"path":"."}'), textTokens("a.txt"), textTokens("two files")]
        )
        assert.deepStrictEqual(out.window.history[2]?.origin, { version: 4, eventId: "id-000006" })
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("rejects an orphan tool result, and the whole batch with it", () =>
      Effect.gen(function* () {
        yield* given([appended(message("u1", "user", "hi"))])
        const ctx = yield* service
        yield* expectInvalid(
          ctx.appendMessages(stream, [Message.user("fine"), { ...Message.tool("c9", "out"), id: "t9" }]),
          "t9",
          /unknown tool call "c9"/
        )
      }).pipe(Effect.provide(live()))
    )

    it.effect("rejects a second result for a call, in the window or in the batch", () =>
      Effect.gen(function* () {
        yield* given(conversation.map(appended))
        const ctx = yield* service
        yield* expectInvalid(
          ctx.appendMessages(stream, [{ ...Message.tool("c1", "again"), id: "t2" }]),
          "t2",
          /"c1" already has a result/
        )
        yield* expectInvalid(
          ctx.appendMessages(stream, [
            Message.assistant("", [Message.toolCall("c2", "ls", null)]),
            Message.tool("c2", "one"),
            { ...Message.tool("c2", "two"), id: "t3" }
          ]),
          "t3",
          /"c2" already has a result/
        )
      }).pipe(Effect.provide(live()))
    )

    it.effect("rejects a duplicate message id, against the window or within the batch", () =>
      Effect.gen(function* () {
        yield* given([{ _tag: "SystemPromptSet", messages: [systemPrompt] }, appended(message("u1", "user", "hi"))])
        const ctx = yield* service
        yield* expectInvalid(ctx.appendMessages(stream, [{ ...Message.user("x"), id: "u1" }]), "u1", /already/)
        yield* expectInvalid(ctx.appendMessages(stream, [{ ...Message.user("x"), id: "sys" }]), "sys", /already/)
        yield* expectInvalid(
          ctx.appendMessages(stream, [
            { ...Message.user("x"), id: "n1" },
            { ...Message.user("y"), id: "n1" }
          ]),
          "n1",
          /already/
        )
      }).pipe(Effect.provide(live()))
    )

    it.effect("rejects tool calls made by a non-assistant or a non-chat message, and a repeated call id", () =>
      Effect.gen(function* () {
        yield* given(conversation.map(appended))
        const ctx = yield* service
        yield* expectInvalid(
          ctx.appendMessages(stream, [{ id: "x1", role: "user", parts: [Message.toolCall("c5", "ls", null)] }]),
          "x1",
          /only assistant messages make tool calls/
        )
        yield* expectInvalid(
          ctx.appendMessages(stream, [
            { ...Message.assistant("", [Message.toolCall("c6", "ls", null)]), id: "x2", kind: "recall" }
          ]),
          "x2",
          /"recall" message cannot carry tool calls/
        )
        yield* expectInvalid(
          ctx.appendMessages(stream, [{ id: "x3", role: "assistant", parts: [Message.toolResult("c1", "late")] }]),
          "x3",
          /tool results belong in tool/
        )
        yield* expectInvalid(
          ctx.appendMessages(stream, [{ ...Message.assistant("", [Message.toolCall("c1", "ls", null)]), id: "x4" }]),
          "x4",
          /"c1" is used already/
        )
      }).pipe(Effect.provide(live()))
    )

    it.effect("rejects reusing the id of a completed call whose pair was trimmed", () =>
      Effect.gen(function* () {
        // Its result could never be appended ("already has a result"), so the call would dangle.
        yield* given([
          ...conversation.map(appended),
          { _tag: "HistoryTrimmed", budget: 20, removedIds: ["u1", "a1", "t1"] }
        ])
        const ctx = yield* service
        yield* expectInvalid(
          ctx.appendMessages(stream, [{ ...Message.assistant("", [Message.toolCall("c1", "ls", null)]), id: "x5" }]),
          "x5",
          /"c1" is used already/
        )
      }).pipe(Effect.provide(live()))
    )
  })

  describe("clearHistory", () => {
    it.effect("drops history and completed calls, keeps system and knowledge, recomputes tokens", () =>
      Effect.gen(function* () {
        yield* given([
          { _tag: "SystemPromptSet", messages: [systemPrompt] },
          { _tag: "KnowledgeSet", messages: [message("k1", "system", "facts", { tokens: 5 })] },
          ...conversation.map(appended)
        ])
        const ctx = yield* service
        const out = yield* ctx.clearHistory(stream)
        thenEvents(out, [{ _tag: "HistoryCleared", scope: "conversation" }])
        assert.deepStrictEqual(idsOf(out.window.system), ["sys"])
        assert.deepStrictEqual(idsOf(out.window.knowledge), ["k1"])
        assert.deepStrictEqual(out.window.history, [])
        assert.deepStrictEqual(out.window.completedToolIds, [])
        assert.deepStrictEqual(out.window.tokens, {
          system: 8,
          knowledge: 5,
          taskState: 0,
          signals: 0,
          history: 0,
          total: 13
        })
        // The call id is free again once its pair is gone from the window and the bookkeeping.
        const again = yield* ctx.appendMessages(stream, [
          Message.assistant("", [Message.toolCall("c1", "ls", null)]),
          Message.tool("c1", "fresh")
        ])
        yield* checkConsistent(again)
      }).pipe(Effect.provide(live()))
    )

    it.effect("clears queued and deferred tool pairs and seams even when history is already empty", () =>
      Effect.gen(function* () {
        yield* given([
          { _tag: "ToolPairsQueued", toolCallIds: ["c1"] },
          { _tag: "ToolPairSummaryDeferred", toolCallId: "c2", resultMessageId: "t2", summary: "s", tokens: 3 }
        ])
        const ctx = yield* service
        const out = yield* ctx.clearHistory(stream)
        thenEvents(out, [{ _tag: "HistoryCleared", scope: "conversation" }])
        assert.deepStrictEqual([out.window.pendingToolPairs, out.window.deferredSummaries], [[], []])
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("with only a system prompt is a no-op that writes nothing", () =>
      Effect.gen(function* () {
        const before = yield* given([{ _tag: "SystemPromptSet", messages: [systemPrompt] }])
        const ctx = yield* service
        const out = yield* ctx.clearHistory(stream)
        thenEvents(out, [])
        assert.deepStrictEqual(out.window, before)
        assert.strictEqual(out.window.version, 1)
        assert.deepStrictEqual(idsOf(out.window.system), ["sys"])
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("removeKind and the source API's removers as RemoveKind commands", () => {
    const removers = [
      ["removeRecallMessages", "recall"],
      ["removeCorrectionMessages", "correction"],
      ["removeGraphFactsMessages", "graph_facts"],
      ["removePersonaFactsMessages", "persona_facts"],
      ["removeTrajectoryHintsMessages", "trajectory_hints"],
      ["removeTreeMemoryMessages", "tree_memory"],
      ["removeReasoningStrategiesMessages", "reasoning_strategies"],
      ["removeLspMessages", "lsp"],
      ["removeCodeContextMessages", "code_context"],
      ["removeSummaryMessages", "summary"],
      ["removeCrossSessionMessages", "cross_session"],
      ["removeSessionDigestMessage", "session_digest"],
      ["removeDocumentRagMessages", "document_rag"]
    ] as const

    it("there is one source name per injected kind except ctxlog's own (seams, briefings, skills), as values", () => {
      assert.deepStrictEqual(
        removers.map(([, kind]) => kind),
        Message.InjectedKind.literals.filter((kind) => kind !== "seam" && kind !== "briefing" && kind !== "skill")
      )
      assert.deepStrictEqual(
        Object.entries(ContextService.sourceKinds),
        removers.map(([name, kind]): [string, string] => [name, kind])
      )
    })

    for (const [name, kind] of removers) {
      it.effect(`${name} removes every "${kind}" message from knowledge and history, and nothing else`, () =>
        Effect.gen(function* () {
          const other = kind === "lsp" ? "recall" : "lsp"
          yield* given([
            { _tag: "SystemPromptSet", messages: [systemPrompt] },
            {
              _tag: "MessagesInjected",
              kind,
              messages: [message("k1", "system", "one", { kind })],
              replacesInHistory: false
            },
            {
              _tag: "MessagesInjected",
              kind: other,
              messages: [message("o1", "system", "other", { kind: other })],
              replacesInHistory: false
            },
            appended(message("u1", "user", "hi")),
            appended(message("h1", "user", "appended", { kind }))
          ])
          const ctx = yield* service
          const remove = ContextService.Command.RemoveKind({ kind: ContextService.sourceKinds[name] })
          const out = yield* ctx.execute(stream, remove)
          thenEvents(out, [{ _tag: "MessagesRemoved", messageIds: ["k1", "h1"], reason: `kind:${kind}` }])
          assert.deepStrictEqual(idsOf(Window.messages(out.window)), ["sys", "o1", "u1"])
          yield* checkConsistent(out)
          const again = yield* ctx.execute(stream, remove)
          thenEvents(again, [])
        }).pipe(Effect.provide(live()))
      )
    }

    it.effect("removeKind also removes seams and briefings by kind", () =>
      Effect.gen(function* () {
        yield* given([
          appended(message("u1", "user", "hi")),
          {
            _tag: "SeamProduced",
            level: 1,
            message: message("s1", "system", "seam", { kind: "seam" }),
            replacedIds: ["u1"]
          }
        ])
        const ctx = yield* service
        const out = yield* ctx.removeKind(stream, "seam")
        thenEvents(out, [{ _tag: "MessagesRemoved", messageIds: ["s1"], reason: "kind:seam" }])
        assert.deepStrictEqual(out.window.history, [])
        assert.deepStrictEqual(out.window.seams, [])
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("trimToBudget", () => {
    const setup = given([{ _tag: "SystemPromptSet", messages: [systemPrompt] }, ...conversation.map(appended)])

    it.effect("drops the oldest history first and keeps the system prefix and the newest messages", () =>
      Effect.gen(function* () {
        const before = yield* setup
        assert.strictEqual(before.tokens.total, 58)
        const ctx = yield* service
        const out = yield* ctx.trimToBudget(stream, 48)
        thenEvents(out, [{ _tag: "HistoryTrimmed", budget: 48, removedIds: ["u1"] }])
        assert.deepStrictEqual(idsOf(out.window.system), ["sys"])
        assert.deepStrictEqual(idsOf(out.window.history), ["a1", "t1", "u2", "a2"])
        assert.strictEqual(out.window.tokens.total, 48)
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("never separates a tool call from its result", () =>
      Effect.gen(function* () {
        yield* setup
        const ctx = yield* service
        // Dropping u1 and a1 alone would reach 38; the call leaves with its result instead.
        const out = yield* ctx.trimToBudget(stream, 38)
        thenEvents(out, [{ _tag: "HistoryTrimmed", budget: 38, removedIds: ["u1", "a1", "t1"] }])
        assert.deepStrictEqual(idsOf(out.window.history), ["u2", "a2"])
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("keeps a call answered by a result that also answers a later call", () =>
      Effect.gen(function* () {
        yield* given([
          appended(message("a1", "assistant", [Message.toolCall("c1", "ls", null)])),
          appended(message("u1", "user", "meanwhile")),
          appended(message("a2", "assistant", [Message.toolCall("c2", "cat", null)])),
          appended(message("t", "tool", [Message.toolResult("c1", "x"), Message.toolResult("c2", "y")])),
          // The model has seen the results (a render): trimming may take them (unseen ones stay, issue 20).
          {
            _tag: "PromptRendered",
            provider: "openai",
            model: "m",
            tokens: { system: 0, knowledge: 0, taskState: 0, signals: 0, history: 30, total: 30 },
            sha256: "ff"
          },
          appended(message("u2", "user", "next"))
        ])
        const ctx = yield* service
        const out = yield* ctx.trimToBudget(stream, 20)
        thenEvents(out, [{ _tag: "HistoryTrimmed", budget: 20, removedIds: ["a1", "a2", "t"] }])
        assert.deepStrictEqual(idsOf(out.window.history), ["u1", "u2"])
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    // u2 is the user's latest ask: it stays too (issue 39), so only u1 can leave here.
    it.effect("keeps pinned messages together with their tool pair", () =>
      Effect.gen(function* () {
        yield* setup
        const ctx = yield* service
        yield* ctx.pin(stream, "t1")
        const out = yield* ctx.trimToBudget(stream, 10)
        thenEvents(out, [{ _tag: "HistoryTrimmed", budget: 10, removedIds: ["u1"] }])
        assert.deepStrictEqual(idsOf(out.window.history), ["a1", "t1", "u2", "a2"])
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("keeps the newest message and the user's latest ask even when the budget is below them", () =>
      Effect.gen(function* () {
        yield* setup
        const ctx = yield* service
        const out = yield* ctx.trimToBudget(stream, 1)
        assert.deepStrictEqual(idsOf(out.window.history), ["u2", "a2"])
        assert.deepStrictEqual(idsOf(out.window.system), ["sys"])
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("rejects a budget that is not a whole number; an infinite budget is a no-op", () =>
      Effect.gen(function* () {
        yield* setup
        const ctx = yield* service
        yield* expectInvalid(ctx.trimToBudget(stream, Number.NaN), undefined, /whole number of tokens, got NaN/)
        yield* expectInvalid(ctx.trimToBudget(stream, 20.5), undefined, /got 20.5/)
        thenEvents(yield* ctx.trimToBudget(stream, Number.POSITIVE_INFINITY), [])
      }).pipe(Effect.provide(live()))
    )

    it.effect("is a no-op at budget 0 and when the window already fits", () =>
      Effect.gen(function* () {
        const before = yield* setup
        const ctx = yield* service
        const zero = yield* ctx.trimToBudget(stream, 0)
        thenEvents(zero, [])
        assert.deepStrictEqual(zero.window, before)
        const fits = yield* ctx.trimToBudget(stream, 58)
        thenEvents(fits, [])
        assert.strictEqual(fits.window.version, before.version)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("inject", () => {
    const setup = given([
      { _tag: "SystemPromptSet", messages: [systemPrompt] },
      { _tag: "KnowledgeSet", messages: [message("k1", "system", "stable")] },
      appended(message("u1", "user", "hi")),
      appended(message("h1", "user", "old recall in history", { kind: "recall" }))
    ])

    it.effect(
      "replaces that kind in knowledge (history keeps its own) right after the system prompt and stable knowledge",
      () =>
        Effect.gen(function* () {
          yield* setup
          const ctx = yield* service
          const out = yield* ctx.inject(stream, "recall", ["remembered A", Message.user("remembered B")])
          assert.strictEqual(out.events.length, 1)
          const [event] = out.events
          assert.strictEqual(event?._tag, "MessagesInjected")
          assert.deepStrictEqual(
            Window.messages(out.window).map((item) => [item.id, item.kind]),
            [
              ["sys", "chat"],
              ["k1", "chat"],
              ["id-000001", "recall"],
              ["id-000002", "recall"],
              ["u1", "chat"],
              ["h1", "recall"]
            ]
          )
          // Injected context is counted inside its wrapper, as every builder sends it.
          assert.strictEqual(
            out.window.tokens.knowledge,
            10 +
              textTokens(Window.renderContext("recall", "remembered A")) +
              textTokens(Window.renderContext("recall", "remembered B"))
          )
          yield* checkConsistent(out)
        }).pipe(Effect.provide(live()))
    )

    it.effect("twice replaces the first injection; the newest kind sits first after stable knowledge", () =>
      Effect.gen(function* () {
        yield* setup
        const ctx = yield* service
        yield* ctx.inject(stream, "recall", ["first"])
        yield* ctx.inject(stream, "lsp", ["diagnostics"])
        const out = yield* ctx.inject(stream, "recall", ["second"])
        assert.deepStrictEqual(out.window.knowledge.map(Message.textOf), ["stable", "second", "diagnostics"])
        assert.deepStrictEqual(
          out.window.knowledge.map((item) => item.kind),
          ["chat", "recall", "lsp"]
        )
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )

    it.effect("an empty injection removes the kind; with nothing present it is a no-op", () =>
      Effect.gen(function* () {
        yield* setup
        const ctx = yield* service
        // Only history holds a recall message (h1): nothing to replace.
        thenEvents(yield* ctx.inject(stream, "recall", []), [])
        yield* ctx.inject(stream, "recall", ["recalled"])
        const removed = yield* ctx.inject(stream, "recall", [])
        thenEvents(removed, [{ _tag: "MessagesInjected", kind: "recall", messages: [], replacesInHistory: false }])
        assert.deepStrictEqual(idsOf(Window.messages(removed.window)), ["sys", "k1", "u1", "h1"])
        const nothing = yield* ctx.inject(stream, "recall", [])
        thenEvents(nothing, [])
      }).pipe(Effect.provide(live()))
    )

    it.effect("rejects injected messages with tool parts or a clashing id", () =>
      Effect.gen(function* () {
        yield* setup
        const ctx = yield* service
        yield* expectInvalid(
          ctx.inject(stream, "lsp", [{ id: "l1", role: "user", parts: [Message.toolResult("c1", "x")] }]),
          "l1",
          /cannot carry tool calls or results/
        )
        yield* expectInvalid(ctx.inject(stream, "lsp", [{ ...Message.user("x"), id: "u1" }]), "u1", /already/)
        // Replacing its own kind frees the ids of what it replaces in knowledge; history's ids stay taken.
        yield* ctx.inject(stream, "recall", [{ ...Message.user("x"), id: "r9" }])
        const out = yield* ctx.inject(stream, "recall", [{ ...Message.user("y"), id: "r9" }])
        assert.deepStrictEqual(idsOf(out.window.knowledge), ["k1", "r9"])
        yield* expectInvalid(ctx.inject(stream, "recall", [{ ...Message.user("x"), id: "h1" }]), "h1", /already/)
        yield* checkConsistent(out)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("recall injections", () => {
    // A source that ignores the budget (the service must enforce it) and echoes what it was asked.
    const source = Layer.succeed(RecallSource.RecallSource, {
      recall: (request) =>
        request.query === "fail"
          ? Effect.fail(new RecallSource.RecallError({ kind: request.kind, detail: "index offline" }))
          : Effect.succeed(
              [0, 1, 2].map((rank) => ({
                message: Message.user(`${request.kind}|${request.query}|${request.owner ?? "-"}|${rank}`),
                score: 1 - rank / 10
              }))
            )
    })
    const hitTokens = (kind: string, query: string, owner = "-") =>
      textTokens(Window.renderContext(kind, `${kind}|${query}|${owner}|0`))

    const cases = [
      ["injectSemanticRecall", "recall"],
      ["injectCrossSessionContext", "cross_session"]
    ] as const

    it.effect(
      "injectSummaries needs no query: the stored summaries and seams gone from the window, newest first, within the budget",
      () =>
        Effect.gen(function* () {
          const summary = (id: string, text: string) => message(id, "assistant", text, { kind: "summary", tokens: 6 })
          yield* given([
            { _tag: "SystemPromptSet", messages: [systemPrompt] },
            ...conversation.map(appended),
            {
              _tag: "Compacted",
              tier: "hard",
              summary: summary("s1", "first summary"),
              removedIds: ["u1", "a1"],
              carryOver: null,
              throughVersion: 6,
              cooldownTurns: 0
            },
            {
              _tag: "SeamProduced",
              level: 1,
              message: message("seam1", "system", "archived", { kind: "seam", tokens: 6 }),
              replacedIds: ["t1"]
            },
            {
              _tag: "Compacted",
              tier: "hard",
              summary: summary("s2", "second summary"),
              removedIds: ["s1", "u2"],
              carryOver: null,
              throughVersion: 8,
              cooldownTurns: 0
            },
            { _tag: "MessagesRemoved", messageIds: ["s2"], reason: "kind:summary" }
          ])
          const ctx = yield* service
          // The seam is in history already; s2 is only in the log, and s1 is rolled into s2 (issue 20).
          const out = yield* ctx.injectSummaries(stream, 100)
          assert.deepStrictEqual(out.window.knowledge.map(Message.textOf), ["second summary"])
          assert.deepStrictEqual(idsOf(out.window.history), ["seam1", "a2"])
          // A second injection replaces the first and still leaves history alone; a tiny budget fits nothing.
          const none = yield* ctx.injectSummaries(stream, 1)
          assert.deepStrictEqual(none.window.knowledge, [])
          assert.deepStrictEqual(idsOf(none.window.history), ["seam1", "a2"])
          yield* checkConsistent(none)
        }).pipe(Effect.provide(live()))
    )

    it.effect("an injection of kind summary never removes the summary compaction placed in history", () =>
      Effect.gen(function* () {
        yield* given([
          ...conversation.map(appended),
          {
            _tag: "Compacted",
            tier: "hard",
            summary: message("s1", "assistant", "summary", { kind: "summary" }),
            removedIds: ["u1", "a1", "t1"],
            carryOver: null,
            throughVersion: 5,
            cooldownTurns: 0
          }
        ])
        const ctx = yield* service
        const out = yield* ctx.inject(stream, "summary", [])
        thenEvents(out, [])
        const injected = yield* ctx.inject(stream, "summary", ["recalled summary"])
        assert.deepStrictEqual(idsOf(injected.window.history), ["s1", "u2", "a2"])
        yield* checkConsistent(injected)
      }).pipe(Effect.provide(live()))
    )

    for (const [name, kind] of cases) {
      it.effect(`${name} injects "${kind}" hits within the token budget, best first`, () =>
        Effect.gen(function* () {
          yield* given([{ _tag: "SystemPromptSet", messages: [systemPrompt] }, appended(message("u1", "user", "hi"))])
          const ctx = yield* service
          const budget = 2 * hitTokens(kind, "deploy", "ann") + 1
          const out = yield* ctx[name](stream, "deploy", budget, "ann")
          assert.deepStrictEqual(out.window.knowledge.map(Message.textOf), [
            `${kind}|deploy|ann|0`,
            `${kind}|deploy|ann|1`
          ])
          assert.isTrue(out.window.knowledge.every((item) => item.kind === kind))
          assert.isAtMost(out.window.tokens.knowledge, budget)
          // A second call replaces the first.
          const again = yield* ctx[name](stream, "rollback", hitTokens(kind, "rollback"))
          assert.deepStrictEqual(again.window.knowledge.map(Message.textOf), [`${kind}|rollback|-|0`])
          yield* checkConsistent(again)
        }).pipe(Effect.provide(live(source)))
      )
    }

    it.effect("a failing source is a typed RecallError and writes nothing", () =>
      Effect.gen(function* () {
        yield* given([appended(message("u1", "user", "hi"))])
        const ctx = yield* service
        const before = yield* logState
        const error = yield* failureOf(ctx.injectSemanticRecall(stream, "fail", 100))
        assert.strictEqual(error._tag, "RecallError")
        assert.deepStrictEqual(yield* logState, before)
      }).pipe(Effect.provide(live(source)))
    )
  })

  describe("pin", () => {
    it.effect("pins, ignores a repeated pin, unpins, and rejects an unknown message", () =>
      Effect.gen(function* () {
        yield* given([{ _tag: "SystemPromptSet", messages: [systemPrompt] }, appended(message("u1", "user", "hi"))])
        const ctx = yield* service
        const pinned = yield* ctx.pin(stream, "u1")
        thenEvents(pinned, [{ _tag: "MessagePinned", messageId: "u1", pinned: true }])
        assert.strictEqual(pinned.window.history[0]?.pinned, true)
        thenEvents(yield* ctx.pin(stream, "u1"), [])
        const unpinned = yield* ctx.pin(stream, "u1", false)
        thenEvents(unpinned, [{ _tag: "MessagePinned", messageId: "u1", pinned: false }])
        assert.isFalse(Object.hasOwn(unpinned.window.history[0] ?? {}, "pinned"))
        const system = yield* ctx.pin(stream, "sys")
        assert.strictEqual(system.window.system[0]?.pinned, true)
        yield* checkConsistent(system)
        yield* expectInvalid(ctx.pin(stream, "nope"), "nope", /no such message/)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("completeTurn", () => {
    it.effect("counts turns and runs the cooldown down after a hard compaction", () =>
      Effect.gen(function* () {
        yield* given([
          appended(message("u1", "user", "hi")),
          {
            _tag: "Compacted",
            tier: "hard",
            summary: message("sum", "system", "summary", { kind: "summary" }),
            removedIds: ["u1"],
            carryOver: "summary",
            throughVersion: 1,
            cooldownTurns: 2
          }
        ])
        const ctx = yield* service
        const out = yield* ctx.completeTurn(stream)
        thenEvents(out, [{ _tag: "TurnCompleted" }])
        assert.deepStrictEqual(out.window.compaction, {
          turn: 1,
          turnsSinceHard: 1,
          cooldownRemaining: 1,
          compactedThisTurn: false
        })
        yield* ctx.completeTurn(stream)
        const third = yield* ctx.completeTurn(stream)
        assert.deepStrictEqual(third.window.compaction, {
          turn: 3,
          turnsSinceHard: 3,
          cooldownRemaining: 0,
          compactedThisTurn: false
        })
        yield* checkConsistent(third)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("resetConversation", () => {
    it.effect("starts a new stream with the system prompt and stable knowledge; the old one points to it", () =>
      Effect.gen(function* () {
        yield* given([
          { _tag: "SystemPromptSet", messages: [systemPrompt] },
          { _tag: "KnowledgeSet", messages: [message("k1", "system", "stable")] },
          {
            _tag: "MessagesInjected",
            kind: "recall",
            messages: [message("r1", "system", "recalled", { kind: "recall" })],
            replacesInHistory: false
          },
          { _tag: "TaskGoalSet", goal: "goal", tokens: 1 },
          { _tag: "SignalRaised", signal: { id: "sig", text: "note", tokens: 1 } },
          ...conversation.map(appended),
          { _tag: "TurnCompleted" }
        ])
        const ctx = yield* service
        const out = yield* ctx.resetConversation(stream)
        assert.notStrictEqual(out.stream, stream)
        assert.deepStrictEqual(
          out.events.map((event) => event._tag),
          ["SystemPromptSet", "KnowledgeSet"]
        )
        assert.deepStrictEqual(idsOf(Window.messages(out.window)), ["sys", "k1"])
        assert.deepStrictEqual([out.window.history, out.window.taskState.goal, out.window.signals], [[], null, []])
        yield* checkConsistent(out, out.stream)
        // The old stream ends with a pointer to the new one, its window otherwise unchanged.
        const old = yield* written(stream)
        assert.deepStrictEqual(old.at(-1), {
          _tag: "ConversationContinued",
          id: old.at(-1)?.id ?? "",
          into: out.stream
        })
        assert.strictEqual((yield* ctx.load(stream)).history.length, conversation.length)
        // The new stream goes on like any other.
        const next = yield* ctx.appendMessages(out.stream, [Message.user("fresh start")])
        yield* checkConsistent(next, out.stream)
      }).pipe(Effect.provide(live()))
    )
  })

  describe("forkAt", () => {
    const drafts: ReadonlyArray<WindowEvent.Draft> = [
      { _tag: "SystemPromptSet", messages: [systemPrompt] },
      ...conversation.map(appended)
    ]

    it.effect("forking at a middle version equals replaying that prefix", () =>
      Effect.gen(function* () {
        yield* given(drafts)
        const ctx = yield* service
        const log = yield* EventLog.EventLog
        const out = yield* ctx.forkAt(stream, 3, "fork")
        const prefix = stampAll(drafts.slice(0, 3))
        assert.deepStrictEqual(out.events.map(withoutId), prefix.map(withoutId))
        // Event ids are unique across the log, so the fork has its own: map them back and the windows match.
        const renamed = prefix.map((event, index) => ({ ...event, id: out.events[index]?.id ?? "missing" }))
        assert.deepStrictEqual(out.window, Window.replay(renamed))
        assert.deepStrictEqual(idsOf(out.window.history), ["u1", "a1"])
        assert.deepStrictEqual(yield* ctx.load("fork"), out.window)
        yield* checkConsistent(out, "fork")
        // The source stream is untouched.
        assert.strictEqual(yield* log.version(stream), drafts.length)
        const continued = yield* ctx.appendMessages("fork", [Message.tool("c1", "forked result")])
        assert.deepStrictEqual(continued.window.completedToolIds, ["c1"])
      }).pipe(Effect.provide(live()))
    )

    it.effect("forking at the current version copies the whole stream; at 0, nothing", () =>
      Effect.gen(function* () {
        const source = yield* given(drafts)
        const ctx = yield* service
        const whole = yield* ctx.forkAt(stream, drafts.length, "whole")
        assert.deepStrictEqual(idsOf(whole.window.history), idsOf(source.history))
        assert.strictEqual(whole.window.tokens.total, source.tokens.total)
        const empty = yield* ctx.forkAt(stream, 0, "empty")
        assert.deepStrictEqual(empty.window, Window.empty)
      }).pipe(Effect.provide(live()))
    )

    it.effect("a version past the end, negative or fractional is a typed VersionNotFound; nothing is written", () =>
      Effect.gen(function* () {
        yield* given(drafts)
        const ctx = yield* service
        const log = yield* EventLog.EventLog
        for (const version of [drafts.length + 1, -1, 1.5]) {
          const error = yield* failureOf(ctx.forkAt(stream, version, "fork"))
          assert.deepStrictEqual(error, new ContextService.VersionNotFound({ stream, version, current: drafts.length }))
        }
        assert.strictEqual(yield* log.version("fork"), 0)
        assert.strictEqual(Chunk.size(yield* Stream.runCollect(log.readAll())), drafts.length)
      }).pipe(Effect.provide(live()))
    )

    it.effect("forking into an existing stream is a conflict and writes nothing", () =>
      Effect.gen(function* () {
        yield* given(drafts)
        const ctx = yield* service
        const before = yield* logState
        const error = yield* failureOf(ctx.forkAt(stream, 2, stream))
        assert.strictEqual(error._tag, "ConcurrencyConflict")
        assert.deepStrictEqual(yield* logState, before)
      }).pipe(Effect.provide(live()))
    )
  })
})
