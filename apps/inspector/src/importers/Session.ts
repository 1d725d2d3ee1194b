/**
 * An imported session, as data, and how it becomes events. A reader (`ClaudeCode`, `Codex`,
 * `Responses`, `AiSdk`) turns a file into {@link Session}s: ordered {@link Step}s, each with the time
 * and the source line it came from. {@link record} writes them through the same services a live run
 * uses, on an in-memory log, each step under a `Clock` stopped at the step's own time, so every
 * envelope's `recordedAt` is the time the tool recorded (the cache TTL needs it):
 *
 * - `Messages`: `MessageAppended` (the user's words, tool results, a message that was no model call).
 * - `Call`: one model call. `TurnPolicySet` when the builder changes (another model), then
 *   `PromptRendered` rebuilt from the window before it (`RenderRecord.recordRender`, with the builder
 *   config and options: `ctxlog render` / `verify --renders` rebuild it), the answer
 *   (`MessageAppended`), and `UsageReported` with the provider's recorded usage.
 * - `Compaction`: the tool's own compaction: `Compacted` removing the whole history, its summary in
 *   its place (a chat message: the tool sends it as one).
 * - `TurnEnd`: `TurnCompleted` (a user turn ended), as the turn module marks it.
 *
 * Nothing is decided here: no fit, no trim, no cut of a tool output. The import records what the tool
 * sent, not what a ctxlog policy would have sent.
 *
 * @since 0.8.0
 */
import { ContextService, EventLog, type LanguageModel, type Message, type WindowEvent } from "@ctxlog/core"
import { CtxBuilder, RenderRecord } from "@ctxlog/providers"
import { Policy } from "@ctxlog/turn"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { ImportError } from "../Transfer.js"

/** The formats `ctxlog import` reads. @since 0.8.0 */
export const formats = ["ctxlog", "openai-chat", "claude-code", "codex", "openai-responses", "ai-sdk"] as const
/** @since 0.8.0 */
export type Format = (typeof formats)[number]

/** One thing that happened in a session, at `at` (epoch ms), read from `line` (1-based) of its file. @since 0.8.0 */
export type Step =
  | {
      readonly _tag: "Messages"
      readonly at: number
      readonly line: number
      readonly messages: ReadonlyArray<Message.MessageInput>
    }
  | {
      readonly _tag: "Call"
      readonly at: number
      readonly line: number
      readonly model: string
      readonly answer: ReadonlyArray<Message.Part>
      readonly answerId?: string | undefined
      readonly usage?: LanguageModel.Usage | undefined
    }
  | {
      readonly _tag: "Compaction"
      readonly at: number
      readonly line: number
      readonly summary: Message.MessageInput | undefined
    }
  | { readonly _tag: "TurnEnd"; readonly at: number; readonly line: number }

/** How a session's calls are rendered: the builder the tool's requests had. @since 0.8.0 */
export type Wire = "anthropic" | "openai-responses" | "openai-chat"

/** A session read from a file: one stream. @since 0.8.0 */
export interface Session {
  readonly file: string
  readonly format: Format
  readonly stream: string
  readonly wire: Wire
  /** The model context window the renders are checked against (tokens). */
  readonly contextWindow: number
  /** A subagent sidechain: the stream it was spawned from, and the tool call that spawned it when known. */
  readonly parent?: { readonly stream: string; readonly toolCallId?: string | undefined } | undefined
  readonly steps: ReadonlyArray<Step>
}

/** A file read: its sessions, and the line types it did not know, counted. @since 0.8.0 */
export interface FileRead {
  readonly file: string
  readonly format: Format
  readonly sessions: ReadonlyArray<Session>
  readonly unknown: Readonly<Record<string, number>>
}

/** A session as events, ready for `Transfer.write`. @since 0.8.0 */
export interface Recorded {
  readonly stream: string
  readonly events: ReadonlyArray<WindowEvent.WindowEvent>
  /** Each event's original time (epoch ms). */
  readonly recordedAt: ReadonlyArray<number>
  readonly metadata: ReadonlyArray<EventLog.EventMetadata>
  readonly calls: number
}

/** A clock stopped at one instant: an append under it records that time. */
const clockAt = (millis: number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => millis,
  currentTimeMillis: Effect.succeed(millis),
  unsafeCurrentTimeNanos: () => BigInt(millis) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(millis) * 1_000_000n),
  sleep: () => Effect.void
})

/** The builder config of a call: the tool's wire format, the call's model, the session's window. @since 0.8.0 */
export const configOf = (session: Pick<Session, "wire" | "contextWindow">, model: string): CtxBuilder.ProviderConfig =>
  session.wire === "anthropic"
    ? // Claude Code marks the last block of each request for caching (one breakpoint, on the last message):
      // recorded in the policy, so a replay under it caches the same way.
      { provider: "anthropic", model, contextWindow: session.contextWindow, cacheBreakpoints: "last-message" }
    : session.wire === "openai-responses"
      ? // Codex sends its reasoning back as `encrypted_content` without an item id (`store: false`).
        { provider: "openai", api: "responses", model, contextWindow: session.contextWindow, statelessReasoning: true }
      : { provider: "openai", model, contextWindow: session.contextWindow }

/** The metadata every event of an imported session carries: who wrote it, and a sidechain's parent. @since 0.8.0 */
export const metadataOf = (session: Session): EventLog.EventMetadata => ({
  actor: `import.${session.format}`,
  ...(session.parent === undefined
    ? {}
    : {
        correlationId: session.parent.stream,
        ...(session.parent.toolCallId === undefined ? {} : { causationId: session.parent.toolCallId })
      })
})

/**
 * Record a session's steps as events on a fresh in-memory log; a step that cannot be recorded (a render
 * the builder refuses: an orphaned tool result, say) fails naming its line, and nothing is returned.
 * @since 0.8.0
 */
export const record = (session: Session): Effect.Effect<Recorded, ImportError> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const log = yield* EventLog.EventLog
    const stream = session.stream
    const provider = session.wire === "anthropic" ? "anthropic" : "openai"
    let policyKey: string | undefined
    let calls = 0
    for (const step of session.steps) {
      const fail = (detail: string) => new ImportError({ file: session.file, line: step.line, detail })
      const effect: Effect.Effect<void, ImportError, ContextService.ContextService> = Effect.gen(function* () {
        switch (step._tag) {
          case "Messages":
            if (step.messages.length > 0) yield* ctx.appendMessages(stream, step.messages)
            return
          case "TurnEnd":
            yield* ctx.completeTurn(stream)
            return
          case "Compaction": {
            const summary = step.summary === undefined ? [] : yield* ctx.prepare([step.summary])
            yield* ctx.run(stream, (window) =>
              Either.right([
                {
                  _tag: "Compacted" as const,
                  tier: "manual" as const,
                  summary: summary[0] ?? null,
                  removedIds: window.history.map((message) => message.id),
                  carryOver: null,
                  throughVersion: window.version,
                  cooldownTurns: 0
                }
              ])
            )
            return
          }
          case "Call": {
            const config = configOf(session, step.model)
            const policy = Policy.toJson({ builder: config })
            const key = JSON.stringify(policy)
            if (key !== policyKey) {
              yield* ctx.run(stream, () => Either.right([{ _tag: "TurnPolicySet" as const, policy }]))
              policyKey = key
            }
            const window = yield* ctx.load(stream)
            const builder = CtxBuilder.forProvider(config)
            // The config places Claude Code's breakpoint (`cacheBreakpoints`); the Responses API caches on its own.
            const options: CtxBuilder.BuildOptions = {}
            const built = builder.build(window, options)
            if (Either.isLeft(built)) return yield* fail(`the model call cannot be rendered: ${built.left.message}`)
            const target = { provider, model: step.model }
            yield* RenderRecord.recordRender(stream, built.right, target, { config, options })
            yield* ctx.appendMessages(stream, [
              step.answerId === undefined
                ? { role: "assistant", parts: step.answer }
                : { role: "assistant", parts: step.answer, id: step.answerId }
            ])
            if (step.usage !== undefined) {
              yield* RenderRecord.recordUsage(stream, step.usage, built.right.stats.total, target)
            }
            calls++
            return
          }
        }
      }).pipe(Effect.mapError((error) => (error._tag === "ImportError" ? error : fail(error.message))))
      yield* Effect.withClock(effect, clockAt(step.at))
    }
    const envelopes = yield* Stream.runCollect(log.read(stream)).pipe(
      Effect.mapError((error) => new ImportError({ file: session.file, line: 0, detail: error.message }))
    )
    const all = Chunk.toReadonlyArray(envelopes)
    const metadata = metadataOf(session)
    return {
      stream,
      events: all.map((envelope) => envelope.event),
      recordedAt: all.map((envelope) => envelope.recordedAt),
      metadata: all.map(() => metadata),
      calls
    }
  }).pipe(Effect.provide(ContextService.layerMemory()))

/** A timestamp (ISO text or epoch ms) as epoch ms, or undefined when it is none. @since 0.8.0 */
export const millisOf = (value: unknown): number | undefined => {
  if (typeof value === "number" && Number.isFinite(value)) return value < 1e12 ? Math.round(value * 1000) : value
  if (typeof value !== "string" || value === "") return undefined
  const millis = Date.parse(value)
  return Number.isFinite(millis) ? millis : undefined
}

/** A JSON object (not an array), for the readers' checks. @since 0.8.0 */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A non-negative integer field, or 0. @since 0.8.0 */
export const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0
