/**
 * The OpenAI Agents SDK (JS, `@openai/agents` 0.20) on a ctxlog stream: {@link CtxlogSession}, a
 * `Session` that keeps every item exactly as it was given, in a stream whose window the turn module
 * renders for the model call.
 *
 * @since 0.1.0
 */
import {
  type Context,
  type ContextOptions,
  CtxlogError,
  createContext,
  type ModelCallSpan,
  type TurnPolicy
} from "@ctxlog/client"
import { TieredCompaction } from "@ctxlog/compaction"
import { ContextService, type EventCodec, EventLog, Message } from "@ctxlog/core"
import { type AgentItem, fromAgentItems, stableJson, storedAgentItem, toAgentItems } from "@ctxlog/providers/openai"
import { type ModelCallTrace, Policy, Turn } from "@ctxlog/turn"
import type {
  AgentInputItem,
  CallModelInputFilter,
  Model,
  ModelRequest,
  ModelInputData,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionAwareSession,
  OpenAIResponsesCompactionResult,
  SessionHistoryRewriteArgs,
  SessionHistoryRewriteAwareSession,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession
} from "@openai/agents"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { tracedModel } from "./internal/agentsTrace.js"
import { refused } from "./internal/recorder.js"

/** Options of {@link CtxlogSession}: where the log is (as `createContext`), the session id (the stream), the policy. @since 0.1.0 */
export type CtxlogSessionOptions = ContextOptions & {
  /** The session id, and the stream its items go to. */
  readonly sessionId: string
  /**
   * The turn policy (default: the OpenAI Responses builder for `model`, default tiers). Its builder
   * renders in the `openai-agents` format whatever its own `format` says.
   */
  readonly policy?: TurnPolicy
  /** The model of the default policy (default `gpt-4.1`). */
  readonly model?: string
  /** The context window of the default policy (default: the builder's own). */
  readonly contextWindow?: number
}

/** One stored item: the message it lives in and the item exactly as it was given. */
interface Entry {
  readonly messageId: string
  readonly item: AgentItem
}

/** The session's items, folded from the stream's events up to `version`. */
interface Store {
  version: number
  entries: Array<Entry>
  /** Applied history transactions: operation id → the transaction's canonical JSON. */
  operations: Map<string, string>
}

/** The reason a `MessagesRemoved` of a history transaction carries: its operation and transaction. */
const transactionReason = "openai-agents.transaction "
const popReason = "openai-agents.popItem"
const mutationReason = "openai-agents.historyMutation"

const fail = (tag: string, message: string): CtxlogError => new CtxlogError(tag, message, undefined)

const orThrow = <A>(either: Either.Either<A, { readonly _tag: string; readonly message: string }>): A => {
  if (Either.isLeft(either)) throw refused(either.left)
  return either.right
}

const toSdk = (items: ReadonlyArray<AgentItem>): Array<AgentInputItem> =>
  items.map((item) => structuredClone(item) as unknown as AgentInputItem)

/**
 * An item as the SDK's runner stores it (its `stripTransientCallIds`): function calls and their results,
 * and tool-search items with a call id, lose their `id`, at any depth (their `providerData` too). The
 * filter puts a call's new items in the log in this form, so the items the runner stores next are the
 * same items, and the store holds exactly what it was given.
 */
const persistable = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(persistable)
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value
  const record = value as { readonly [key: string]: unknown }
  const strip =
    record.type === "function_call" ||
    record.type === "function_call_result" ||
    ((record.type === "tool_search_call" || record.type === "tool_search_output") && typeof record.callId === "string")
  return Object.fromEntries(
    Object.entries(record).flatMap(([key, entry]) => (strip && key === "id" ? [] : [[key, persistable(entry)]]))
  )
}

/** Which items are the same for the filter and the store: the item's JSON without its `id`. */
const looseKey = (item: unknown): string => {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return stableJson(item)
  const { id: _id, ...rest } = item as { readonly [key: string]: unknown }
  return stableJson(rest)
}

/** The key items are matched by: as the runner stores them, ids aside. */
const keyOf = (item: unknown): string => looseKey(persistable(item))

const isToolResult = (part: Message.Part): part is Message.ToolResultPart => part.type === "tool_result"

/** A count of keys, taken one at a time. */
class Multiset {
  private readonly counts = new Map<string, number>()
  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }
  take(key: string): boolean {
    const count = this.counts.get(key) ?? 0
    if (count === 0) return false
    this.counts.set(key, count - 1)
    return true
  }
}

const invalidData = (detail?: string): CtxlogError =>
  fail(
    "InvalidTransaction",
    `Session history transaction items contain invalid or unsupported data${detail === undefined ? "." : ` (${detail}).`}`
  )

/**
 * The SDK's transaction arguments checked as its own `MemorySession` checks them (the same messages):
 * the envelope read once (an accessor that throws is "invalid", its message not repeated), exactly the
 * fields of the transaction's type, items that are JSON (what the log keeps; the SDK also takes binary
 * data, which a ctxlog log does not) and can be cloned.
 */
const checkTransaction = (
  args: SessionHistoryTransactionArgs
): { readonly operationId: string; readonly canonical: string; readonly transaction: Transaction } => {
  let operationId: unknown
  let transaction: unknown
  try {
    if (typeof args !== "object" || args === null) throw new Error("no arguments")
    operationId = Reflect.get(args, "operationId")
    transaction = Reflect.get(args, "transaction")
  } catch {
    throw fail("InvalidTransaction", "Session history transaction arguments are invalid.")
  }
  if (typeof operationId !== "string" || operationId.trim().length === 0) {
    throw fail("InvalidTransaction", "Session history transaction operationId must be a non-empty string.")
  }
  if (typeof transaction !== "object" || transaction === null) {
    throw fail("InvalidTransaction", "Session history transaction must be an object.")
  }
  try {
    structuredClone(transaction)
  } catch {
    throw invalidData()
  }
  const record = transaction as { readonly [key: string]: unknown }
  const items = (value: unknown): ReadonlyArray<AgentItem> => {
    if (!Array.isArray(value)) throw fail("InvalidTransaction", "Session history transaction items are invalid.")
    for (let index = 0; index < value.length; index++)
      if (!(index in value)) throw invalidData(`items[${index}] is a hole`)
    const converted = fromAgentItems(value)
    if (Either.isLeft(converted)) throw invalidData(converted.left.message)
    return converted.right.map((message) => storedAgentItem(message) as AgentItem)
  }
  const fields = (expected: ReadonlyArray<string>) =>
    Object.keys(record).length === expected.length && expected.every((key) => Object.hasOwn(record, key))
  if (record.type === "append_items") {
    if (!fields(["type", "items"]))
      throw fail("InvalidTransaction", "Session history append transaction fields are invalid.")
    const checked: Transaction = { type: "append_items", items: items(record.items) }
    return { operationId, canonical: stableJson(checked), transaction: checked }
  }
  if (record.type === "replace_suffix") {
    if (!fields(["type", "expectedSuffix", "replacement"])) {
      throw fail("InvalidTransaction", "Session history suffix transaction fields are invalid.")
    }
    const checked: Transaction = {
      type: "replace_suffix",
      expectedSuffix: items(record.expectedSuffix),
      replacement: items(record.replacement)
    }
    return { operationId, canonical: stableJson(checked), transaction: checked }
  }
  throw fail("InvalidTransaction", "Unsupported session history transaction type.")
}

type Transaction =
  | { readonly type: "append_items"; readonly items: ReadonlyArray<AgentItem> }
  | {
      readonly type: "replace_suffix"
      readonly expectedSuffix: ReadonlyArray<AgentItem>
      readonly replacement: ReadonlyArray<AgentItem>
    }

/** A message ctxlog keeps opaquely: its item on one empty text part (no tokens, nothing a builder sends). */
const opaqueOf = (message: Message.MessageInput): Message.MessageInput => {
  const first = message.parts[0]
  return {
    role: "assistant",
    parts: [
      {
        ...Message.text(""),
        ...(first?.providerOptions === undefined ? {} : { providerOptions: first.providerOptions })
      }
    ]
  }
}

/**
 * The messages as the window can take them: the SDK keeps items the window's tool pairing refuses (a
 * second function call with a call id already used, a result whose call the window never had or that
 * has a result already, as histories rewritten by the SDK's compaction hold); those are kept opaquely
 * (the item whole, sent back as it is), so the session stores what it was given.
 */
const holdable = (
  window: { readonly history: ReadonlyArray<Message.Message>; readonly completedToolIds: ReadonlyArray<string> },
  messages: ReadonlyArray<Message.MessageInput>
): ReadonlyArray<Message.MessageInput> => {
  const called = new Set<string>(window.completedToolIds)
  const answered = new Set<string>(window.completedToolIds)
  for (const message of window.history) {
    for (const call of Message.toolCallsOf(message)) called.add(call.id)
    for (const result of Message.toolResultsOf(message)) answered.add(result.toolCallId)
  }
  return messages.map((message) => {
    const calls = Message.toolCallsOf(message)
    const results = Message.toolResultsOf(message)
    if (calls.some((call) => called.has(call.id))) return opaqueOf(message)
    if (results.some((result) => !called.has(result.toolCallId) || answered.has(result.toolCallId))) {
      return opaqueOf(message)
    }
    for (const call of calls) called.add(call.id)
    for (const result of results) answered.add(result.toolCallId)
    return message
  })
}

/**
 * An OpenAI Agents SDK `Session` backed by a ctxlog stream.
 *
 * The session keeps two things apart: **what it stores** — every item exactly as it was added (ids
 * only where the caller gave them, `providerData`, `phase`, output shapes, order and count, kinds
 * ctxlog does not model such as the Responses `compaction` marker kept opaquely) — and **what the
 * model is sent**: the stream's window rendered by the turn module (compaction tiers, seams, the fit)
 * in the `openai-agents` format, handed to the model call by {@link CtxlogSession.callModelInputFilter}.
 * Reading the history never renders, so a history with a tool call waiting for approval, or holding
 * only a reasoning item, reads back like any other.
 *
 * - `addItems`: one message per item (the item kept whole on it); user input goes in through
 *   `Turn.prepare`, an answer's items with the tool results after them through `Turn.complete` (an
 *   answer with no call and no result ends the turn, running the proactive tier).
 * - `getItems(limit?)`: the items added and not removed (popped, cleared, rewritten), oldest first —
 *   the log's own record, so compaction, pruning and trimming of the window change nothing here.
 * - `popItem`, `clearSession`, `applyHistoryTransaction` (atomic and idempotent by operation id),
 *   `applyHistoryMutations`, `replaceHistoryWithCompaction`: each one append.
 * - `runCompaction` (called by the runner after it stores a turn): the policy's compaction of the
 *   window at the hard threshold, or at once with `force`; no model usage is reported (`null`).
 * - `callModelInputFilter`: put in the run config, it makes the window the prompt (see its doc).
 *
 * ```ts
 * const session = new CtxlogSession({ sqlite: "agent.db", sessionId: "s1" })
 * await run(agent, "Why does the build fail?", { session, callModelInputFilter: session.callModelInputFilter })
 * ```
 * @since 0.1.0
 */
export class CtxlogSession
  implements
    OpenAIResponsesCompactionAwareSession,
    SessionHistoryTransactionAwareSession,
    SessionHistoryRewriteAwareSession
{
  private context: Promise<Context> | undefined
  readonly policy: TurnPolicy
  private store: Store = { version: 0, entries: [], operations: new Map() }
  /** Items the filter put in the log that the runner has not stored yet (it stores them next). */
  private pending: Array<string> = []
  /** Items of the last render that are ctxlog's (a summary, knowledge, a cut output): never stored back. */
  private artifacts = new Multiset()
  private iteration = 0
  /** The session's turns (`Turn.open`), opened on its first step. */
  private turns: Turn.Session | undefined
  /** The last render `callModelInputFilter` made: the next model call sends it. */
  private lastRender: ModelCallTrace.RenderedCall | undefined

  constructor(private readonly options: CtxlogSessionOptions) {
    const base: TurnPolicy = options.policy ?? {
      builder: {
        provider: "openai",
        api: "responses",
        model: options.model ?? "gpt-4.1",
        // The builder config is recorded (`TurnPolicySet`) and its schema's optionals are exact.
        ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow })
      },
      compaction: {}
    }
    this.policy = { ...base, builder: { ...base.builder, format: "openai-agents" } } as TurnPolicy
  }

  private open(): Promise<Context> {
    if (this.context === undefined) {
      const { sessionId: _id, policy: _policy, model: _model, contextWindow: _window, ...contextOptions } = this.options
      this.context = createContext(contextOptions as ContextOptions)
    }
    return this.context
  }

  private get stream(): string {
    return this.options.sessionId
  }

  /** Run an effect on the context's runtime; a typed failure becomes a `CtxlogError` with its tag. */
  private async run<A, E>(
    effect: Effect.Effect<A, E, Turn.Requirements | EventLog.EventLog | Turn.Records>
  ): Promise<A> {
    const context = await this.open()
    const exit = await context.runtime.runPromiseExit(effect as Effect.Effect<A, E, never>)
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.failureOption(exit.cause)
    const typed: unknown = Option.isSome(failure) ? failure.value : Cause.squash(exit.cause)
    if (typed instanceof CtxlogError) throw typed
    const tag = typeof typed === "object" && typed !== null && "_tag" in typed ? String(typed._tag) : "Defect"
    throw new CtxlogError(tag, typed instanceof Error ? typed.message : String(typed), typed)
  }

  /** The service, the stream's window and the store caught up with it: where every history operation starts. */
  private current() {
    const stream = this.stream
    const self = this
    return Effect.gen(function* () {
      const service = yield* ContextService.ContextService
      const window = yield* service.load(stream)
      const store = yield* self.catchUp(window.version)
      return { service, window, store }
    })
  }

  /**
   * The store caught up with the stream's events through `version` (default: the newest). A message
   * appended is its item (or, for a message ctxlog or another writer made, its items converted); a
   * removal, a clear or a reset takes them out. Compaction, pruning and trimming touch the window only.
   */
  private catchUp(
    version?: number
  ): Effect.Effect<Store, EventLog.StoreError | EventCodec.EventDecodeError, EventLog.EventLog> {
    const stream = this.stream
    const store = this.store
    return Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      const to = version ?? (yield* log.version(stream))
      if (to <= store.version) return store
      const events = yield* Stream.runCollect(log.read(stream, { from: store.version + 1, to }))
      for (const { event } of Chunk.toReadonlyArray(events)) {
        switch (event._tag) {
          case "MessageAppended": {
            const stored = storedAgentItem(event.message)
            const items = stored !== undefined ? [stored] : Either.getOrElse(toAgentItems([event.message]), () => [])
            for (const item of items) store.entries.push({ messageId: event.message.id, item })
            break
          }
          case "MessagesRemoved": {
            const removed = new Set(event.messageIds)
            store.entries = store.entries.filter((entry) => !removed.has(entry.messageId))
            if (event.reason.startsWith(transactionReason)) {
              const recorded = JSON.parse(event.reason.slice(transactionReason.length)) as {
                readonly id: string
                readonly transaction: string
              }
              store.operations.set(recorded.id, recorded.transaction)
            }
            break
          }
          case "HistoryCleared":
          case "ConversationReset":
            store.entries = []
            store.operations = new Map()
            break
        }
      }
      store.version = to
      return store
    })
  }

  /**
   * Put items in the log, in order, one message each, through the turn module: messages that start or
   * continue a turn (user, system, results on their own) with `Turn.prepare`; an answer's items with
   * the results after them with `Turn.complete` (ending the turn when nothing is left to answer).
   */
  /** The session's turns under its policy (`Turn.open`, once). */
  private session() {
    return Effect.suspend(() =>
      this.turns !== undefined
        ? Effect.succeed(this.turns)
        : Effect.tap(Turn.open(this.stream, this.policy), (opened) =>
            Effect.sync(() => {
              this.turns = opened
            })
          )
    )
  }

  private ingest(given: ReadonlyArray<Message.MessageInput>) {
    const stream = this.stream
    const self = this
    return Effect.gen(function* () {
      const service = yield* ContextService.ContextService
      const turns = yield* self.session()
      const messages = holdable(yield* service.load(stream), given)
      let index = 0
      while (index < messages.length) {
        const message = messages[index] as Message.MessageInput
        if (message.role !== "assistant") {
          let end = index + 1
          while (end < messages.length && messages[end]?.role !== "assistant") end++
          yield* turns.prepare({ messages: messages.slice(index, end) })
          index = end
          continue
        }
        let last = index
        while (last + 1 < messages.length && messages[last + 1]?.role === "assistant") last++
        let end = last + 1
        while (end < messages.length && messages[end]?.role === "tool") end++
        const before = messages.slice(index, last)
        if (before.length > 0) yield* service.appendMessages(stream, before)
        const answer = messages[last] as Message.MessageInput
        const tools = messages.slice(last + 1, end)
        // A result message holds one result; a tool message that is not one (none here) goes in as it is.
        const results = tools.flatMap((next) => next.parts.filter(isToolResult))
        const calls = messages.slice(index, last + 1).flatMap((next) => Message.toolCallsOf(next))
        yield* turns.complete({ answer: answer.parts, results, endTurn: calls.length === 0 && results.length === 0 })
        index = end
      }
    })
  }

  /** One append on the stream: the effect in a `ContextService.batch`. */
  private batch<A, E, R>(effect: Effect.Effect<A, E, R>) {
    const stream = this.stream
    return Effect.flatMap(ContextService.ContextService, (service) =>
      Effect.map(service.batch(stream, effect), (done) => done.value)
    )
  }

  async getSessionId(): Promise<string> {
    return this.options.sessionId
  }

  async getItems(limit?: number): Promise<Array<AgentInputItem>> {
    const store = await this.run(this.catchUp())
    const items = store.entries.map((entry) => entry.item)
    return toSdk(limit === undefined ? items : limit <= 0 ? [] : items.slice(-limit))
  }

  async addItems(items: Array<AgentInputItem>): Promise<void> {
    if (items.length === 0) return
    const messages = orThrow(fromAgentItems(items))
    const keys = items.map(keyOf)
    // What the filter already put in the log, and what was ctxlog's own in the last render, is not
    // stored again (the runner stores the input the model call got).
    const pending = [...this.pending]
    const artifacts = this.artifacts
    const fresh = messages.filter((_message, index) => {
      const key = keys[index] ?? ""
      const at = pending.indexOf(key)
      if (at >= 0) {
        pending.splice(at, 1)
        return false
      }
      return !artifacts.take(key)
    })
    this.pending = pending
    if (fresh.length === 0) return
    await this.run(this.batch(this.ingest(fresh)))
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const stream = this.stream
    const self = this
    return this.run(
      this.batch(
        Effect.gen(function* () {
          const { service, store } = yield* self.current()
          const last = store.entries[store.entries.length - 1]
          if (last === undefined) return undefined
          // A message another writer made may stand for several items: the others go back in.
          const siblings = store.entries.filter((entry) => entry.messageId === last.messageId).slice(0, -1)
          yield* service.run(stream, () =>
            Either.right([{ _tag: "MessagesRemoved" as const, messageIds: [last.messageId], reason: popReason }])
          )
          if (siblings.length > 0) {
            yield* service.appendMessages(stream, orThrow(fromAgentItems(siblings.map((entry) => entry.item))))
          }
          return toSdk([last.item])[0]
        })
      )
    )
  }

  async clearSession(): Promise<void> {
    const stream = this.stream
    this.pending = []
    this.artifacts = new Multiset()
    await this.run(Effect.flatMap(ContextService.ContextService, (service) => service.clearHistory(stream)))
  }

  /**
   * The SDK's history transaction: applied atomically (one append) and once per operation id. The
   * operation is recorded in the same append (the `reason` of its `MessagesRemoved` event); the same
   * id with the same transaction again does nothing, with another transaction fails, and a suffix that
   * does not match fails; a failure writes nothing. A clear forgets the operations (as the SDK's own
   * `MemorySession` does).
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    const { operationId, canonical, transaction } = checkTransaction(args)
    const stream = this.stream
    const self = this
    await this.run(
      this.batch(
        Effect.gen(function* () {
          const { service, store } = yield* self.current()
          const known = store.operations.get(operationId)
          if (known !== undefined) {
            if (known === canonical) return
            return yield* Effect.fail(
              fail("TransactionConflict", "Session history operation was already applied with a different transaction.")
            )
          }
          let removed: ReadonlyArray<string> = []
          let added: ReadonlyArray<AgentItem> = []
          if (transaction.type === "append_items") added = transaction.items
          else {
            const start = store.entries.length - transaction.expectedSuffix.length
            const suffix = start < 0 ? undefined : store.entries.slice(start)
            if (
              suffix === undefined ||
              stableJson(suffix.map((entry) => entry.item)) !== stableJson(transaction.expectedSuffix)
            ) {
              return yield* Effect.fail(
                fail("TransactionConflict", "Session history suffix no longer matches the transaction precondition.")
              )
            }
            removed = [...new Set(suffix.map((entry) => entry.messageId))]
            added = transaction.replacement
          }
          yield* service.run(stream, () =>
            Either.right([
              {
                _tag: "MessagesRemoved" as const,
                messageIds: removed,
                reason: `${transactionReason}${JSON.stringify({ id: operationId, transaction: canonical })}`
              }
            ])
          )
          if (added.length > 0) yield* self.ingest(orThrow(fromAgentItems(added)))
        })
      )
    )
  }

  /**
   * The SDK's history mutations (`replace_function_call`: the first function call with that call id
   * becomes the replacement, later ones with it go), applied in one append: the items from the first
   * one that changes are removed and the rewritten rest appended, so the order stays as it was.
   */
  async applyHistoryMutations(args: SessionHistoryRewriteArgs): Promise<void> {
    if (args.mutations.length === 0) return
    const stream = this.stream
    const self = this
    await this.run(
      this.batch(
        Effect.gen(function* () {
          const { service, store } = yield* self.current()
          const before = store.entries.map((entry) => entry.item)
          let after: ReadonlyArray<AgentItem> = before
          for (const mutation of args.mutations) {
            if (mutation.type !== "replace_function_call") continue
            let kept = false
            after = after.flatMap((item) => {
              if (item.type !== "function_call" || item.callId !== mutation.callId) return [item]
              if (kept) return []
              kept = true
              return [structuredClone(mutation.replacement) as unknown as AgentItem]
            })
          }
          let first = 0
          while (
            first < before.length &&
            first < after.length &&
            stableJson(before[first]) === stableJson(after[first])
          )
            first++
          if (first === before.length && first === after.length) return
          const removed = [...new Set(store.entries.slice(first).map((entry) => entry.messageId))]
          yield* service.run(stream, () =>
            Either.right([{ _tag: "MessagesRemoved" as const, messageIds: removed, reason: mutationReason }])
          )
          const rest = after.slice(first)
          if (rest.length > 0) yield* service.appendMessages(stream, orThrow(fromAgentItems(rest)))
        })
      )
    )
  }

  /** The history replaced by a compaction marker and the items it keeps, in one append (a clear, then them). */
  async replaceHistoryWithCompaction(items: Array<AgentInputItem>): Promise<void> {
    const messages = orThrow(fromAgentItems(items))
    const stream = this.stream
    const self = this
    this.pending = []
    this.artifacts = new Multiset()
    await this.run(
      this.batch(
        Effect.gen(function* () {
          const service = yield* ContextService.ContextService
          yield* service.clearHistory(stream)
          yield* self.ingest(messages)
        })
      )
    )
  }

  async runCompaction(args?: OpenAIResponsesCompactionArgs): Promise<OpenAIResponsesCompactionResult | null> {
    const context = await this.open()
    const stream = this.stream
    const window = await context.load(stream)
    if (window.history.length === 0) return null
    const tiered = Policy.tieredOf(this.policy, Turn.budget(this.policy))
    const due = args?.force === true || (tiered !== undefined && TieredCompaction.pressure(window, tiered) === "Hard")
    if (!due) return null
    const maxSummaryTokens = this.policy.compaction?.maxSummaryTokens
    await context.compact(stream, maxSummaryTokens === undefined ? {} : { maxSummaryTokens })
    return null
  }

  /**
   * The run config's `callModelInputFilter` that makes the window the prompt: before each model call
   * it puts in the log what the call's input holds that the session does not (the run's new input, the
   * items the run produced since), sets the agent's instructions as the window's system prompt, and
   * renders the window with the turn module (`Turn.render`: compaction tiers, seams, the fit, a
   * rebuildable `PromptRendered`) in the `openai-agents` format; the model call gets exactly that
   * render's `instructions` and `input`, which `ctxlog render --at` rebuilds. All in one append.
   */
  readonly callModelInputFilter: CallModelInputFilter = async ({ modelData }) => this.renderFor(modelData)

  private async renderFor(modelData: ModelInputData): Promise<ModelInputData> {
    const stream = this.stream
    const self = this
    const inputMessages = orThrow(fromAgentItems(modelData.input.map(persistable)))
    const instructions = modelData.instructions
    const { rendered, fresh } = await this.run(
      Effect.flatMap(ContextService.ContextService, (batching) =>
        batching.batch(
          stream,
          Effect.gen(function* () {
            const { service, window, store } = yield* self.current()
            const held = new Multiset()
            for (const entry of store.entries) held.add(keyOf(entry.item))
            const fresh = inputMessages.filter((message) => !held.take(keyOf(storedAgentItem(message))))
            if (instructions !== undefined) {
              const current = window.system.map((message) => Message.textOf(message)).join("\n\n")
              if (current !== instructions) yield* service.setSystemPrompt(stream, instructions)
            }
            if (fresh.length > 0) yield* self.ingest(fresh)
            const startsTurn = fresh.some((message) => message.role === "user")
            const turns = yield* self.session()
            const rendered = yield* turns.render({ iteration: startsTurn ? 0 : self.iteration + 1 })
            return { rendered, fresh, startsTurn }
          })
        )
      ).pipe(
        // The render's span reads the one append the batch made (its `PromptRendered` and the window after it).
        Effect.map((done) => ({
          ...done.value,
          call: { window: done.window, events: done.events, built: done.value.rendered.built }
        }))
      )
    ).then((value) => {
      this.iteration = value.startsTurn ? 0 : this.iteration + 1
      this.lastRender = value.call
      return value
    })
    const request = rendered.built.request as {
      readonly instructions?: string
      readonly input: ReadonlyArray<AgentItem>
    }
    this.pending.push(...fresh.map((message) => keyOf(storedAgentItem(message))))
    const stored = new Multiset()
    for (const message of inputMessages) stored.add(keyOf(storedAgentItem(message)))
    this.artifacts = new Multiset()
    for (const item of request.input) {
      const key = keyOf(item)
      if (!stored.take(key)) this.artifacts.add(key)
    }
    return {
      input: toSdk(request.input),
      ...(request.instructions === undefined ? {} : { instructions: request.instructions })
    }
  }

  /**
   * The agent's model with a GenAI chat span (`chat {model}`) around each call, when the session's
   * options have a `tracerProvider`: the conversation (the session id), the request's settings, the
   * provenance of the render `callModelInputFilter` made for the call, and the response's id, usage
   * (cached input tokens as cache reads) and finish reason. `name` is the model's name on the span
   * (default: the policy's model); `endpoint` its base URL (`server.address`, `server.port`).
   *
   * ```ts
   * const agent = new Agent({ name, instructions, model: session.traceModel(await provider.getModel("gpt-4.1")) })
   * ```
   * @since 0.8.0
   */
  traceModel(model: Model, options: { readonly name?: string; readonly endpoint?: string } = {}): Model {
    const builder = this.policy.builder
    const name = options.name ?? builder.model ?? "unknown"
    return tracedModel(model, async (request: ModelRequest, stream: boolean): Promise<ModelCallSpan> => {
      const context = await this.open()
      const settings = request.modelSettings
      const parameters = Object.fromEntries(
        Object.entries({
          maxTokens: settings.maxTokens,
          temperature: settings.temperature,
          topP: settings.topP,
          frequencyPenalty: settings.frequencyPenalty,
          presencePenalty: settings.presencePenalty
        }).filter(([, value]) => typeof value === "number")
      )
      // The render goes with one call: a call the filter did not render for has no provenance.
      const rendered = this.lastRender
      this.lastRender = undefined
      return context.modelCall(this.stream, rendered, {
        provider: builder.provider,
        model: name,
        endpoint: options.endpoint,
        stream,
        parameters
      })
    })
  }

  /** Close the context (the database); the session reopens it on its next call. */
  async close(): Promise<void> {
    if (this.context !== undefined) await (await this.context).close()
    this.context = undefined
    this.store = { version: 0, entries: [], operations: new Map() }
  }
}
