/**
 * The OpenAI Agents SDK (JS, `@openai/agents` 0.20) on a ctxlog stream: {@link CtxlogSession}, a
 * `Session` whose history is the stream's window, compacted by the turn policy.
 *
 * @since 0.1.0
 */
import { type Context, type ContextOptions, CtxlogError, createContext, type TurnPolicy } from "@ctxlog/client"
import { TieredCompaction } from "@ctxlog/compaction"
import { ContextService, Message, Window } from "@ctxlog/core"
import { type AgentItem, fromAgentItems, toAgentItems } from "@ctxlog/providers/openai"
import { Policy, Turn } from "@ctxlog/turn"
import type {
  AgentInputItem,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionAwareSession,
  OpenAIResponsesCompactionResult
} from "@openai/agents"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { refused } from "./internal/recorder.js"

/** Options of {@link CtxlogSession}: where the log is (as `createContext`), the session id (the stream), the policy. @since 0.1.0 */
export type CtxlogSessionOptions = ContextOptions & {
  /** The session id, and the stream its items go to. */
  readonly sessionId: string
  /** The turn policy (default: the OpenAI Responses builder for `model`, default tiers). */
  readonly policy?: TurnPolicy
  /** The model of the default policy (default `gpt-4.1`). */
  readonly model?: string
  /** The context window of the default policy (default: the builder's own). */
  readonly contextWindow?: number
}

const orThrow = <A>(either: Either.Either<A, { readonly _tag: string; readonly message: string }>): A => {
  if (Either.isLeft(either)) throw refused(either.left)
  return either.right
}

// The Agents SDK's items and the adapter's structural items are the same JSON.
const toSdk = (items: ReadonlyArray<AgentItem>): Array<AgentInputItem> => items as unknown as Array<AgentInputItem>
const fromSdk = (items: ReadonlyArray<AgentInputItem>): ReadonlyArray<AgentItem> =>
  items as unknown as ReadonlyArray<AgentItem>

const isToolResult = (part: Message.Part): part is Message.ToolResultPart => part.type === "tool_result"

/**
 * An OpenAI Agents SDK `Session` backed by a ctxlog stream.
 *
 * - `addItems`: the items become messages (`fromAgentItems`); user input starts a turn
 *   (`Turn.prepare`), an assistant answer goes in with the tool results that follow it
 *   (`Turn.complete`; an answer without tool calls ends the turn, running the proactive tier).
 * - `getItems(limit?)`: the window is rendered under the policy (`Turn.render`: compaction tiers,
 *   seams, the fit, a rebuildable `PromptRendered`) and its messages come back as items
 *   (`toAgentItems`), the newest `limit` of them when given.
 * - `popItem`: the newest item leaves the window (its message is removed; when that message made
 *   several items, the others are appended back in the same append).
 * - `clearSession`: the history is cleared (the log keeps it).
 * - `runCompaction` (the SDK's compaction hook, called by the runner after it stores a turn): the
 *   policy's compaction, on our side. It summarizes the older history (`Compacted`) when the window
 *   is at the policy's hard threshold, or at once with `force`; a policy without compaction compacts
 *   only when forced. The Responses-side arguments (`responseId`, `store`, `compactionMode`) are for
 *   server-side compaction, which a ctxlog session does not ask for. It reports no model usage (`null`).
 *
 * ```ts
 * const session = new CtxlogSession({ sqlite: "agent.db", sessionId: "s1" })
 * await run(agent, "Why does the build fail?", { session })
 * ```
 * @since 0.1.0
 */
export class CtxlogSession implements OpenAIResponsesCompactionAwareSession {
  private context: Promise<Context> | undefined
  readonly policy: TurnPolicy

  constructor(private readonly options: CtxlogSessionOptions) {
    this.policy = options.policy ?? {
      builder: {
        provider: "openai",
        api: "responses",
        model: options.model ?? "gpt-4.1",
        // The builder config is recorded (`TurnPolicySet`) and its schema's optionals are exact.
        ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow })
      },
      compaction: {}
    }
  }

  private open(): Promise<Context> {
    if (this.context === undefined) {
      const { sessionId: _id, policy: _policy, model: _model, contextWindow: _window, ...contextOptions } = this.options
      this.context = createContext(contextOptions as ContextOptions)
    }
    return this.context
  }

  private async service<A, E>(
    use: (service: ContextService.ContextService.Service) => Effect.Effect<A, E>
  ): Promise<A> {
    const context = await this.open()
    try {
      return await context.runtime.runPromise(Effect.flatMap(ContextService.ContextService, use))
    } catch (error) {
      const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Defect"
      throw new CtxlogError(tag, error instanceof Error ? error.message : String(error), error)
    }
  }

  async getSessionId(): Promise<string> {
    return this.options.sessionId
  }

  async getItems(limit?: number): Promise<Array<AgentInputItem>> {
    const context = await this.open()
    const window = await context.load(this.options.sessionId)
    if (window.history.length === 0 && window.system.length === 0) return []
    const rendered = await context.turn(this.options.sessionId, this.policy).render()
    const items = orThrow(toAgentItems(Window.messages(rendered.window)))
    return toSdk(limit === undefined ? items : limit <= 0 ? [] : items.slice(-limit))
  }

  async addItems(items: Array<AgentInputItem>): Promise<void> {
    if (items.length === 0) return
    const messages = orThrow(fromAgentItems(fromSdk(items)))
    const turn = (await this.open()).turn(this.options.sessionId, this.policy)
    let input: Array<Message.MessageInput> = []
    let index = 0
    const flush = async () => {
      if (input.length > 0) await turn.prepare(input)
      input = []
    }
    while (index < messages.length) {
      const message = messages[index] as Message.MessageInput
      if (message.role !== "assistant") {
        input.push(message)
        index++
        continue
      }
      await flush()
      let end = index + 1
      while (end < messages.length && messages[end]?.role === "tool") end++
      const results = messages.slice(index + 1, end).flatMap((next) => next.parts.filter(isToolResult))
      const calls = Message.toolCallsOf({ parts: message.parts })
      await turn.complete({ answer: message.parts, answerId: message.id, results, endTurn: calls.length === 0 })
      index = end
    }
    await flush()
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const stream = this.options.sessionId
    return this.service((service) =>
      Effect.gen(function* () {
        const window = yield* service.load(stream)
        const last = window.history[window.history.length - 1]
        if (last === undefined) return undefined
        const items = orThrow(toAgentItems([last]))
        const rest = items.length > 1 ? orThrow(fromAgentItems(items.slice(0, -1))) : []
        yield* service.batch(
          stream,
          Effect.gen(function* () {
            yield* service.run(stream, () =>
              Either.right([{ _tag: "MessagesRemoved" as const, messageIds: [last.id], reason: "session.popItem" }])
            )
            if (rest.length > 0) yield* service.appendMessages(stream, rest)
          })
        )
        return toSdk(items.slice(-1))[0]
      })
    )
  }

  async runCompaction(args?: OpenAIResponsesCompactionArgs): Promise<OpenAIResponsesCompactionResult | null> {
    const context = await this.open()
    const stream = this.options.sessionId
    const window = await context.load(stream)
    if (window.history.length === 0) return null
    const tiered = Policy.tieredOf(this.policy, Turn.budget(this.policy))
    const due = args?.force === true || (tiered !== undefined && TieredCompaction.pressure(window, tiered) === "Hard")
    if (!due) return null
    const maxSummaryTokens = this.policy.compaction?.maxSummaryTokens
    await context.compact(stream, maxSummaryTokens === undefined ? {} : { maxSummaryTokens })
    return null
  }

  async clearSession(): Promise<void> {
    const stream = this.options.sessionId
    await this.service((service) => service.clearHistory(stream))
  }

  /** Close the context (the database); the session reopens it on its next call. */
  async close(): Promise<void> {
    if (this.context !== undefined) await (await this.context).close()
    this.context = undefined
  }
}
