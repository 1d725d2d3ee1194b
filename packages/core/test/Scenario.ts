/**
 * Given / when / then over window events (Emmett style), shared by the core tests.
 *
 * `given` appends events straight to the log, `when` is any ContextService operation, and `thenEvents`
 * compares what it wrote (ids aside). `checkConsistent` asserts the invariants every outcome must keep:
 * the live window equals a replay of the log from empty, cached token totals equal the sums, and tool
 * calls and results stay paired.
 */
import { assert } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import {
  ContextService,
  EventLog,
  Ids,
  Message,
  Receipt,
  RecallSource,
  TokenCounter,
  ToolPairs,
  Window,
  WindowEvent
} from "../src/index.js"

/** The stream every scenario writes to. */
export const stream = "conversation"

/** The service over an in-memory log, heuristic tokens (ceil(chars / 4) + 4 per message), sequential ids. */
export const live = (recall: Layer.Layer<RecallSource.RecallSource> = RecallSource.layerEmpty) =>
  ContextService.layerMemory({
    tokenCounter: TokenCounter.layerHeuristic(),
    ids: Ids.layerSequential("id"),
    recall: recall
  })

/** The tokens the heuristic counter gives a message of plain text. */
export const textTokens = (value: string): number => Math.ceil(value.length / 4) + TokenCounter.messageOverhead

/** A message as an event carries it. */
export const message = (
  id: string,
  role: Message.Role,
  parts: string | ReadonlyArray<Message.Part>,
  options: { readonly kind?: Message.MessageKind; readonly tokens?: number; readonly pinned?: boolean } = {}
): Message.Message => ({
  id,
  role,
  kind: options.kind ?? "chat",
  parts: typeof parts === "string" ? [Message.text(parts)] : parts,
  tokens: options.tokens ?? 10,
  ...(options.pinned === true ? { pinned: true } : {})
})

/** Events with ids `given-1`, `given-2`, ...: what a scenario starts from. */
export const stampAll = (drafts: ReadonlyArray<WindowEvent.Draft>, prefix = "given"): Array<WindowEvent.WindowEvent> =>
  drafts.map((draft, index) => WindowEvent.stamp(draft, `${prefix}-${index + 1}`))

/** Append `drafts` to the scenario stream and return the window they make. */
export const given = (drafts: ReadonlyArray<WindowEvent.Draft>) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    const ctx = yield* ContextService.ContextService
    yield* log.append(stream, stampAll(drafts), "no_stream")
    return yield* ctx.load(stream)
  })

/** An event without its id, for comparisons. */
export const withoutId = (event: WindowEvent.WindowEvent): Omit<WindowEvent.WindowEvent, "id"> => {
  const { id: _id, ...rest } = event
  return rest
}

/** An event without its receipt (its figures are `Receipt.test.ts`'s subject, not a decision's). */
const withoutReceipt = (event: Omit<WindowEvent.WindowEvent, "id">): unknown => {
  if (!("receipt" in event) || event.receipt === undefined) return event
  const { receipt: _receipt, ...rest } = event
  return rest
}

/**
 * The events an outcome wrote equal `expected` (ids aside; receipts aside, but every receipted event
 * written through the service has one).
 */
export const thenEvents = (outcome: ContextService.Outcome, expected: ReadonlyArray<WindowEvent.Draft>): void => {
  for (const event of outcome.events) {
    if (Receipt.isReceipted(event)) assert.isDefined(event.receipt, `${event._tag} written without a receipt`)
  }
  assert.deepStrictEqual<ReadonlyArray<unknown>>(outcome.events.map(withoutId).map(withoutReceipt), expected)
}

/** The messages of a list, by id. */
export const idsOf = (messages: ReadonlyArray<Message.Message>): ReadonlyArray<string> =>
  messages.map((item) => item.id)

/** The cached totals equal the sums of what the partitions hold. */
export const checkTokens = (window: Window.Window): void => {
  const sum = (messages: ReadonlyArray<Message.Message>) => messages.reduce((total, item) => total + item.tokens, 0)
  const taskState = window.taskState.goalTokens + window.taskState.subgoalTokens
  const signals = window.signals.reduce((total, signal) => total + signal.tokens, 0)
  const system = sum(window.system)
  const knowledge = sum(window.knowledge)
  const history = sum(window.history)
  assert.deepStrictEqual(window.tokens, {
    system,
    knowledge,
    taskState,
    signals,
    history,
    total: system + knowledge + taskState + signals + history
  })
}

/** Every event of the scenario stream, as the log returns them. */
export const written = (name: string = stream) =>
  Effect.flatMap(EventLog.EventLog, (log) =>
    Stream.runCollect(log.read(name)).pipe(
      Effect.map((envelopes) => Chunk.toReadonlyArray(envelopes).map((envelope) => envelope.event))
    )
  )

/**
 * The invariants of an outcome: replaying the log from empty equals the live window, the window's
 * version is the stream's, token totals are the sums, and no tool call and result are separated.
 */
export const checkConsistent = (outcome: ContextService.Outcome, name: string = stream) =>
  Effect.gen(function* () {
    const events = yield* written(name)
    assert.deepStrictEqual(Window.replay(events), outcome.window)
    assert.strictEqual(outcome.window.version, events.length)
    checkTokens(outcome.window)
    assert.deepStrictEqual(ToolPairs.problems(outcome.window.history, outcome.window.completedToolIds), [])
  })

/** The stream's version and the whole log's length: both must stay put when a command is rejected. */
export const logState = Effect.gen(function* () {
  const log = yield* EventLog.EventLog
  const all = yield* Stream.runCollect(log.readAll())
  return { version: yield* log.version(stream), events: Chunk.size(all) }
})

/** A `MessageAppended` draft. */
export const appended = (item: Message.Message) => ({ _tag: "MessageAppended", message: item }) as const

/** A small conversation: a user turn, a tool call and its result, another turn. Ten tokens a message. */
export const conversation: ReadonlyArray<Message.Message> = [
  message("u1", "user", "list the files"),
  message("a1", "assistant", [Message.toolCall("c1", "ls", { path: "." })]),
  message("t1", "tool", [Message.toolResult("c1", "a.txt b.txt")]),
  message("u2", "user", "thanks"),
  message("a2", "assistant", "you are welcome")
]
