/**
 * `evolve`, one event type at a time: given events → when one event → then the window.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as SchemaAST from "effect/SchemaAST"
import { EventCodec, Message, ToolPairs, Window, WindowEvent } from "../src/index.js"
import { appended, checkTokens, conversation, idsOf, message, stampAll } from "./Scenario.js"

/** The window the given drafts make. */
const given = (drafts: ReadonlyArray<WindowEvent.Draft>): Window.Window => Window.replay(stampAll(drafts))

/** Fold one more event (id `when`) into a window; the cached totals must stay the sums. */
const when = (window: Window.Window, draft: WindowEvent.Draft): Window.Window => {
  const next = Window.evolve(window, WindowEvent.stamp(draft, "when"))
  assert.strictEqual(next.version, window.version + 1)
  checkTokens(next)
  return next
}

const systemPrompt = message("sys", "system", "rules", { tokens: 3 })
const summary = (id: string) => message(id, "assistant", "summary of earlier turns", { kind: "summary", tokens: 4 })
const seam = (id: string) => message(id, "system", "archived context", { kind: "seam", tokens: 5 })
const base = given([{ _tag: "SystemPromptSet", messages: [systemPrompt] }, ...conversation.map(appended)])

/** One event of every type: the mapped type makes the compiler insist on all of them. */
const samples: { readonly [T in WindowEvent.EventType]: Omit<WindowEvent.EventOf<T>, "id"> } = {
  SystemPromptSet: { _tag: "SystemPromptSet", messages: [systemPrompt] },
  KnowledgeSet: { _tag: "KnowledgeSet", messages: [message("k1", "system", "facts")] },
  TaskGoalSet: { _tag: "TaskGoalSet", goal: "ship", tokens: 1 },
  SubgoalsSet: { _tag: "SubgoalsSet", subgoals: ["a", "b"], tokens: 2 },
  SignalRaised: { _tag: "SignalRaised", signal: { id: "s1", text: "hurry", tokens: 2 } },
  MessageAppended: appended(message("u9", "user", "more")),
  MessagesInjected: {
    _tag: "MessagesInjected",
    kind: "recall",
    messages: [message("r1", "system", "x", { kind: "recall" })],
    replacesInHistory: false
  },
  MessagesRemoved: { _tag: "MessagesRemoved", messageIds: ["u2"], reason: "test" },
  MessagePinned: { _tag: "MessagePinned", messageId: "u1", pinned: true },
  HistoryTrimmed: { _tag: "HistoryTrimmed", budget: 10, removedIds: ["u1"] },
  HistoryCleared: { _tag: "HistoryCleared", scope: "history" },
  ConversationReset: { _tag: "ConversationReset" },
  ConversationContinued: { _tag: "ConversationContinued", into: "next-stream" },
  CalibrationCarried: {
    _tag: "CalibrationCarried",
    from: "previous-stream",
    calibration: { estimatedInputTokens: 100, reportedInputTokens: 120, observations: 2 }
  },
  TurnCompleted: { _tag: "TurnCompleted" },
  PromptRendered: { _tag: "PromptRendered", provider: "openai", model: "m", tokens: base.tokens, sha256: "ff" },
  UsageReported: {
    _tag: "UsageReported",
    provider: "openai",
    model: "m",
    estimatedInputTokens: 50,
    inputTokens: 60,
    outputTokens: 3,
    cacheReadTokens: 10,
    cacheWriteTokens: 0
  },
  ToolOutputPruned: {
    _tag: "ToolOutputPruned",
    outputs: [{ messageId: "t1", toolCallId: "c1", content: "[pruned]", tokens: 6 }]
  },
  MediaPruned: { _tag: "MediaPruned", parts: [{ messageId: "u1", partIndex: 1, stub: "[image pruned]", tokens: 9 }] },
  UserAskCut: {
    _tag: "UserAskCut",
    messageId: "u1",
    parts: [{ partIndex: 0, text: "head [cut] tail" }],
    tokens: 5,
    stored: null
  },
  UnseenCut: {
    _tag: "UnseenCut",
    messageId: "t1",
    parts: [{ partIndex: 0, text: "head [cut] tail" }],
    tokens: 5,
    stored: null
  },
  ToolPairsQueued: { _tag: "ToolPairsQueued", toolCallIds: ["c1"] },
  ToolPairSummaryDeferred: {
    _tag: "ToolPairSummaryDeferred",
    toolCallId: "c1",
    resultMessageId: "t1",
    summary: "two files",
    tokens: 7
  },
  DeferredSummariesApplied: { _tag: "DeferredSummariesApplied", toolCallIds: ["c1"] },
  DeferredSummariesFlushed: { _tag: "DeferredSummariesFlushed" },
  Compacted: {
    _tag: "Compacted",
    tier: "soft",
    summary: summary("sum1"),
    removedIds: ["u1", "a1", "t1"],
    carryOver: "carried",
    throughVersion: 4,
    cooldownTurns: 0
  },
  CompactionFailed: { _tag: "CompactionFailed", tier: "hard", reason: "model timed out" },
  CompactionReverted: {
    _tag: "CompactionReverted",
    compactionEventId: "e",
    removedIds: [],
    restored: [],
    carryOver: null,
    watermark: null
  },
  SeamProduced: { _tag: "SeamProduced", level: 1, message: seam("seam1"), replacedIds: ["u1", "a1", "t1"] },
  SeamsRecompacted: { _tag: "SeamsRecompacted", level: 2, message: seam("seam2"), replacedIds: ["u2"] },
  BriefingProduced: { _tag: "BriefingProduced", message: message("b1", "system", "briefing", { kind: "briefing" }) },
  CycleAdvanced: { _tag: "CycleAdvanced", cycle: 1, removedIds: ["u1"] },
  SeamsReset: { _tag: "SeamsReset" },
  FactsRecorded: {
    _tag: "FactsRecorded",
    facts: [{ subject: "repo", predicate: "uses", object: "pnpm", sourceMessageId: "u1" }]
  },
  TurnPolicySet: { _tag: "TurnPolicySet", policy: { builder: { provider: "default", model: "m" } } },
  CompactionDecided: {
    _tag: "CompactionDecided",
    step: "prepare",
    budgetTokens: 1000,
    decisions: [{ tier: "soft", reason: "below-threshold", usedTokens: 120, thresholdTokens: 700 }]
  },
  CheckpointSaved: {
    _tag: "CheckpointSaved",
    checkpointId: "c2",
    parentCheckpointId: "c1",
    forkOf: "c3",
    checkpoint: { type: "json", encoding: "utf8", data: "{}" },
    metadata: { type: "json", encoding: "utf8", data: "{}" },
    values: [
      { channel: "count", version: 2, value: { type: "json", encoding: "utf8", data: "2" } },
      { channel: "messages", version: "2.0", base: "1.0", removed: [0], appended: [] }
    ]
  },
  CheckpointWritesSaved: {
    _tag: "CheckpointWritesSaved",
    checkpointId: "c2",
    taskId: "t",
    taskPath: "",
    writes: [{ idx: 0, channel: "count", value: { type: "json", encoding: "base64", data: "Mw==" } }]
  },
  CheckpointsDeleted: { _tag: "CheckpointsDeleted" }
}

const unionTags = WindowEvent.WindowEvent.members.map((member) => {
  const tag = SchemaAST.getPropertySignatures(member.ast).find((signature) => signature.name === "_tag")
  return tag !== undefined && SchemaAST.isLiteral(tag.type) ? String(tag.type.literal) : "?"
})

describe("WindowEvent", () => {
  it("eventTypes lists exactly the members of the union, each with a schema version", () => {
    assert.strictEqual(unionTags.length, 39)
    assert.deepStrictEqual([...WindowEvent.eventTypes].sort(), [...unionTags].sort())
    assert.isTrue(WindowEvent.eventTypes.every((type) => WindowEvent.isEventType(type)))
    assert.isFalse(WindowEvent.isEventType("toString"))
  })

  for (const type of WindowEvent.eventTypes) {
    it.effect(`${type}: evolves by one version and survives the codec unchanged`, () =>
      Effect.gen(function* () {
        const event = WindowEvent.stamp(samples[type], `sample-${type}`)
        const [stored] = yield* EventCodec.encodeAll([event])
        assert.strictEqual(stored?.type, type)
        assert.strictEqual(stored?.schemaVersion, WindowEvent.schemaVersions[type])
        if (stored === undefined) return
        const decoded = yield* EventCodec.decode(stored)
        assert.deepStrictEqual(decoded, event)
        assert.deepStrictEqual(Window.evolve(base, decoded), Window.evolve(base, event))
        when(base, samples[type])
      })
    )
  }
})

describe("evolve", () => {
  it("the empty window has nothing and costs nothing", () => {
    assert.strictEqual(Window.empty.version, 0)
    assert.strictEqual(Window.empty.tokens.total, 0)
    assert.deepStrictEqual(Window.replay([]), Window.empty)
  })

  it("SystemPromptSet replaces the system partition and stamps each message's origin", () => {
    const window = when(base, { _tag: "SystemPromptSet", messages: [message("s2", "system", "new", { tokens: 2 })] })
    assert.deepStrictEqual(window.system, [
      { ...message("s2", "system", "new", { tokens: 2 }), origin: { version: 7, eventId: "when" } }
    ])
    assert.strictEqual(window.tokens.system, 2)
    assert.deepStrictEqual(window.history, base.history)
  })

  it("KnowledgeSet replaces stable knowledge and keeps injected context", () => {
    const injected = when(base, samples.MessagesInjected)
    const window = when(injected, samples.KnowledgeSet)
    assert.deepStrictEqual(idsOf(window.knowledge), ["k1", "r1"])
    const again = when(window, { _tag: "KnowledgeSet", messages: [] })
    assert.deepStrictEqual(idsOf(again.knowledge), ["r1"])
  })

  it("TaskGoalSet and SubgoalsSet fill the task state and its tokens", () => {
    const window = when(when(base, samples.TaskGoalSet), samples.SubgoalsSet)
    assert.deepStrictEqual(window.taskState, { goal: "ship", goalTokens: 1, subgoals: ["a", "b"], subgoalTokens: 2 })
    assert.strictEqual(window.tokens.taskState, 3)
    assert.strictEqual(window.tokens.total, base.tokens.total + 3)
  })

  it("SignalRaised adds a signal; PromptRendered clears every signal and nothing else", () => {
    const raised = when(when(base, samples.SignalRaised), samples.SignalRaised)
    assert.strictEqual(raised.signals.length, 2)
    assert.strictEqual(raised.tokens.signals, 4)
    const rendered = when(raised, samples.PromptRendered)
    assert.deepStrictEqual(rendered, { ...raised, version: raised.version + 1, signals: [], tokens: base.tokens })
  })

  it("MessageAppended adds to history and records answered calls once", () => {
    assert.deepStrictEqual(base.completedToolIds, ["c1"])
    const window = when(base, appended(message("t2", "user", [Message.toolResult("c1", "again")])))
    assert.deepStrictEqual(window.completedToolIds, ["c1"])
    assert.deepStrictEqual(window.history.at(-1)?.origin, { version: 7, eventId: "when" })
  })

  const injectedStart = () =>
    given([
      { _tag: "SystemPromptSet", messages: [systemPrompt] },
      { _tag: "KnowledgeSet", messages: [message("k1", "system", "facts")] },
      {
        _tag: "MessagesInjected",
        kind: "lsp",
        messages: [message("l1", "system", "lsp", { kind: "lsp" })],
        replacesInHistory: false
      },
      appended(message("h1", "user", "recall in history", { kind: "recall" }))
    ])

  it("MessagesInjected (v2) replaces its kind in knowledge only and sits right after stable knowledge", () => {
    const window = when(injectedStart(), samples.MessagesInjected)
    assert.deepStrictEqual(idsOf(Window.messages(window)), ["sys", "k1", "r1", "l1", "h1"])
  })

  it("MessagesInjected of schema version 1 also replaced its kind in history (upcast, replayed as it was)", () => {
    const window = when(injectedStart(), { ...samples.MessagesInjected, replacesInHistory: true })
    assert.deepStrictEqual(idsOf(Window.messages(window)), ["sys", "k1", "r1", "l1"])
  })

  it("MessagesRemoved removes from knowledge, history and the seam list, never the system prompt", () => {
    const start = when(when(base, samples.MessagesInjected), samples.SeamProduced)
    const window = when(start, { _tag: "MessagesRemoved", messageIds: ["r1", "seam1", "sys", "u2"], reason: "test" })
    assert.deepStrictEqual(idsOf(window.system), ["sys"])
    assert.deepStrictEqual(window.knowledge, [])
    assert.deepStrictEqual(idsOf(window.history), ["a2"])
    assert.deepStrictEqual(window.seams, [])
  })

  it("MessagePinned pins and unpins a message wherever it is", () => {
    const pinned = when(base, samples.MessagePinned)
    assert.strictEqual(pinned.history[0]?.pinned, true)
    const unpinned = when(pinned, { _tag: "MessagePinned", messageId: "u1", pinned: false })
    assert.deepStrictEqual(unpinned.history, base.history)
  })

  it("HistoryTrimmed removes exactly the recorded ids from history", () => {
    const window = when(base, { _tag: "HistoryTrimmed", budget: 1, removedIds: ["u1", "a1", "t1"] })
    assert.deepStrictEqual(idsOf(window.history), ["u2", "a2"])
    assert.deepStrictEqual(window.system, base.system)
    assert.strictEqual(window.tokens.history, 20)
  })

  it("HistoryCleared empties history and every piece of history bookkeeping", () => {
    const busy = when(when(when(base, samples.ToolPairsQueued), samples.SeamProduced), {
      ...samples.ToolPairSummaryDeferred,
      toolCallId: "c9"
    })
    const window = when(busy, samples.HistoryCleared)
    assert.deepStrictEqual(
      [window.history, window.completedToolIds, window.pendingToolPairs, window.deferredSummaries, window.seams],
      [[], [], [], [], []]
    )
    assert.deepStrictEqual(window.system, base.system)
    assert.strictEqual(window.tokens.total, 3)
  })

  it("HistoryCleared of the conversation also clears injected context, signals and the task state", () => {
    const busy = given([
      { _tag: "SystemPromptSet", messages: [systemPrompt] },
      { _tag: "KnowledgeSet", messages: [message("k1", "system", "facts", { tokens: 5 })] },
      samples.MessagesInjected,
      samples.TaskGoalSet,
      samples.SubgoalsSet,
      samples.SignalRaised,
      ...conversation.map(appended)
    ])
    const window = when(busy, { _tag: "HistoryCleared", scope: "conversation" })
    assert.deepStrictEqual(idsOf(Window.messages(window)), ["sys", "k1"])
    assert.deepStrictEqual([window.signals, window.taskState.goal, window.taskState.subgoals], [[], null, []])
    assert.strictEqual(window.tokens.total, 3 + 5)
  })

  it("ConversationContinued changes nothing in the window (it points readers to the next stream)", () => {
    const window = when(base, samples.ConversationContinued)
    assert.deepStrictEqual({ ...window, version: base.version }, base)
  })

  it("ConversationReset keeps only the system prompt, the version and the calibration", () => {
    const busy = when(when(when(base, samples.UsageReported), samples.TaskGoalSet), samples.TurnCompleted)
    const window = when(busy, samples.ConversationReset)
    assert.deepStrictEqual(window, {
      ...Window.empty,
      version: busy.version + 1,
      system: base.system,
      calibration: busy.calibration,
      tokens: { ...Window.empty.tokens, system: 3, total: 3 }
    })
  })

  it("TurnCompleted counts turns, runs the cooldown down to zero and re-arms compaction", () => {
    const hard = when(base, { ...samples.Compacted, tier: "hard", cooldownTurns: 1 })
    assert.isTrue(hard.compaction.compactedThisTurn)
    const once = when(hard, samples.TurnCompleted)
    const twice = when(once, samples.TurnCompleted)
    assert.deepStrictEqual(once.compaction, {
      turn: 1,
      turnsSinceHard: 1,
      cooldownRemaining: 0,
      compactedThisTurn: false
    })
    assert.strictEqual(twice.compaction.cooldownRemaining, 0)
    assert.strictEqual(twice.compaction.turn, 2)
  })

  it("UsageReported accumulates the calibration", () => {
    const window = when(when(base, samples.UsageReported), {
      ...samples.UsageReported,
      estimatedInputTokens: 50,
      inputTokens: 40
    })
    assert.deepStrictEqual(window.calibration, { estimatedInputTokens: 100, reportedInputTokens: 100, observations: 2 })
    assert.strictEqual(Window.calibrationRatio(when(base, samples.UsageReported)), 60 / 50)
    assert.strictEqual(Window.calibrationRatio(base), 1)
    assert.deepStrictEqual(window.tokens, base.tokens)
  })

  it("ToolOutputPruned rewrites outputs in place and keeps the call/result structure", () => {
    const window = when(base, samples.ToolOutputPruned)
    const result = window.history.find((item) => item.id === "t1")
    assert.deepStrictEqual(result?.parts, [Message.toolResult("c1", "[pruned]")])
    assert.strictEqual(result?.tokens, 6)
    assert.strictEqual(window.tokens.history, base.tokens.history - 4)
    assert.deepStrictEqual(idsOf(window.history), idsOf(base.history))
    assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [])
  })

  it("ToolPairsQueued adds pending pairs once; ToolPairSummaryDeferred moves a pair to the deferred list", () => {
    const queued = when(when(base, { _tag: "ToolPairsQueued", toolCallIds: ["c1", "c2"] }), samples.ToolPairsQueued)
    assert.deepStrictEqual(queued.pendingToolPairs, ["c1", "c2"])
    const deferred = when(queued, samples.ToolPairSummaryDeferred)
    assert.deepStrictEqual(deferred.pendingToolPairs, ["c2"])
    assert.deepStrictEqual(deferred.deferredSummaries, [
      { toolCallId: "c1", resultMessageId: "t1", summary: "two files", tokens: 7 }
    ])
    // A newer summary for the same pair replaces the older one.
    const redone = when(deferred, { ...samples.ToolPairSummaryDeferred, summary: "2 files", tokens: 6 })
    assert.deepStrictEqual(
      redone.deferredSummaries.map((item) => item.summary),
      ["2 files"]
    )
    // Recording a summary does not touch the window's messages.
    assert.deepStrictEqual(redone.history, base.history)
  })

  it("DeferredSummariesApplied replaces the listed outputs (newest recorded first) and keeps the rest deferred", () => {
    const start = given([
      ...conversation.map(appended),
      appended(message("a3", "assistant", [Message.toolCall("c2", "cat", null), Message.toolCall("c3", "cat", null)])),
      appended(message("t3", "tool", [Message.toolResult("c2", "long two"), Message.toolResult("c3", "long three")])),
      { _tag: "ToolPairSummaryDeferred", toolCallId: "c1", resultMessageId: "t1", summary: "s1", tokens: 5 },
      { _tag: "ToolPairSummaryDeferred", toolCallId: "c2", resultMessageId: "t3", summary: "s2", tokens: 8 },
      { _tag: "ToolPairSummaryDeferred", toolCallId: "c3", resultMessageId: "t3", summary: "s3", tokens: 7 }
    ])
    const window = when(start, { _tag: "DeferredSummariesApplied", toolCallIds: ["c2", "c3"] })
    const t3 = window.history.find((item) => item.id === "t3")
    assert.deepStrictEqual(t3?.parts, [Message.toolResult("c2", "s2"), Message.toolResult("c3", "s3")])
    // Each summary's count is the message (10) with only its own output replaced: both savings apply.
    assert.strictEqual(t3?.tokens, 8 + 7 - 10)
    assert.deepStrictEqual(
      window.history.find((item) => item.id === "t1"),
      start.history.find((item) => item.id === "t1")
    )
    assert.deepStrictEqual(
      window.deferredSummaries.map((item) => item.toolCallId),
      ["c1"]
    )
    assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [])
  })

  it("DeferredSummariesFlushed clears both queues and leaves messages alone", () => {
    const busy = when(when(base, { _tag: "ToolPairsQueued", toolCallIds: ["c2"] }), samples.ToolPairSummaryDeferred)
    const window = when(busy, samples.DeferredSummariesFlushed)
    assert.deepStrictEqual([window.pendingToolPairs, window.deferredSummaries], [[], []])
    assert.deepStrictEqual(window.history, busy.history)
  })

  it("Compacted puts the summary where the first removed message was and records carry-over and watermark", () => {
    const window = when(base, { ...samples.Compacted, removedIds: ["a1", "t1", "u2"] })
    assert.deepStrictEqual(idsOf(window.history), ["u1", "sum1", "a2"])
    assert.deepStrictEqual(window.history[1]?.origin, { version: 7, eventId: "when" })
    assert.strictEqual(window.carryOver, "carried")
    assert.strictEqual(window.watermark, 4)
    assert.strictEqual(window.tokens.history, 24)
    // A soft compaction leaves the hard-compaction counters alone.
    assert.deepStrictEqual(window.compaction, { ...base.compaction, compactedThisTurn: true })
  })

  it("Compacted with a hard tier resets turnsSinceHard and starts the cooldown; a rolled summary is replaced", () => {
    const turns = when(when(base, samples.TurnCompleted), samples.TurnCompleted)
    const first = when(turns, samples.Compacted)
    const window = when(first, {
      ...samples.Compacted,
      tier: "hard",
      summary: summary("sum2"),
      removedIds: ["sum1", "u2"],
      cooldownTurns: 3
    })
    assert.deepStrictEqual(idsOf(window.history), ["sum2", "a2"])
    assert.deepStrictEqual(window.compaction, {
      turn: 2,
      turnsSinceHard: 0,
      cooldownRemaining: 3,
      compactedThisTurn: true
    })
  })

  it("Compacted without a summary only removes; removing messages that are gone changes nothing", () => {
    const window = when(base, { ...samples.Compacted, summary: null, removedIds: ["u1", "zz"] })
    assert.deepStrictEqual(idsOf(window.history), ["a1", "t1", "u2", "a2"])
  })

  it("CompactionFailed leaves the window unchanged but the version bumps", () => {
    const window = when(base, samples.CompactionFailed)
    assert.deepStrictEqual(window, { ...base, version: base.version + 1 })
  })

  it("CompactionReverted removes the summary and restores the messages where it was", () => {
    const compacted = when(base, { ...samples.Compacted, removedIds: ["a1", "t1"] })
    const window = when(compacted, {
      _tag: "CompactionReverted",
      compactionEventId: "when",
      removedIds: ["sum1"],
      restored: [base.history[1], base.history[2]].flatMap((item) => (item === undefined ? [] : [item])),
      carryOver: null,
      watermark: null
    })
    assert.deepStrictEqual(idsOf(window.history), idsOf(base.history))
    assert.strictEqual(window.tokens.history, base.tokens.history)
    assert.strictEqual(window.carryOver, null)
    assert.strictEqual(window.watermark, null)
    assert.deepStrictEqual(window.history[1]?.origin, { version: 8, eventId: "when" })
    assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [])
  })

  it("SeamProduced replaces a range with a seam; SeamsRecompacted fuses seams into a higher level", () => {
    const produced = when(base, samples.SeamProduced)
    assert.deepStrictEqual(idsOf(produced.history), ["seam1", "u2", "a2"])
    assert.deepStrictEqual(produced.seams, [{ messageId: "seam1", level: 1 }])
    const fused = when(produced, { ...samples.SeamsRecompacted, replacedIds: ["seam1", "u2"] })
    assert.deepStrictEqual(idsOf(fused.history), ["seam2", "a2"])
    assert.deepStrictEqual(fused.seams, [{ messageId: "seam2", level: 2 }])
    assert.strictEqual(Window.highestSeamLevel(fused), 2)
    assert.strictEqual(Window.highestSeamLevel(base), undefined)
    assert.strictEqual(fused.tokens.history, 15)
  })

  it("BriefingProduced leads history and replaces an earlier briefing", () => {
    const once = when(base, samples.BriefingProduced)
    assert.deepStrictEqual(idsOf(once.history), ["b1", "u1", "a1", "t1", "u2", "a2"])
    const twice = when(once, {
      ...samples.BriefingProduced,
      message: message("b2", "system", "newer", { kind: "briefing" })
    })
    assert.deepStrictEqual(idsOf(twice.history), ["b2", "u1", "a1", "t1", "u2", "a2"])
  })

  it("CycleAdvanced sets the cycle and drops the listed history and seams; SeamsReset forgets the seam levels", () => {
    const seamed = when(base, samples.SeamProduced)
    const advanced = when(seamed, { _tag: "CycleAdvanced", cycle: 1, removedIds: ["seam1", "u2"] })
    assert.strictEqual(advanced.cycle, 1)
    assert.deepStrictEqual(idsOf(advanced.history), ["a2"])
    assert.deepStrictEqual(advanced.seams, [])
    const reset = when(seamed, samples.SeamsReset)
    assert.deepStrictEqual(reset.seams, [])
    assert.deepStrictEqual(reset.history, seamed.history)
  })

  it("TurnPolicySet leaves the window unchanged but the version bumps", () => {
    assert.deepStrictEqual(when(base, samples.TurnPolicySet), { ...base, version: base.version + 1 })
  })

  it("UnseenCut rewrites a tool result's content (or a text part's text) and its tokens; the message stays (ADR 0147)", () => {
    const cut = when(base, samples.UnseenCut)
    const result = cut.history.find((message) => message.id === "t1")
    assert.strictEqual(result?.tokens, 5)
    const part = result?.parts[0]
    assert.strictEqual(part?.type === "tool_result" ? part.content : undefined, "head [cut] tail")
    assert.deepStrictEqual(idsOf(cut.history), idsOf(base.history))
  })

  it("CompactionDecided leaves the window unchanged but the version bumps (ADR 0128)", () => {
    assert.deepStrictEqual(when(base, samples.CompactionDecided), { ...base, version: base.version + 1 })
  })

  it("the LangGraph checkpoint events leave the window unchanged but the version bumps", () => {
    for (const type of ["CheckpointSaved", "CheckpointWritesSaved", "CheckpointsDeleted"] as const) {
      assert.deepStrictEqual(when(base, samples[type]), { ...base, version: base.version + 1 })
    }
  })

  it("FactsRecorded leaves the window unchanged but the version bumps", () => {
    assert.deepStrictEqual(when(base, samples.FactsRecorded), { ...base, version: base.version + 1 })
  })
})
