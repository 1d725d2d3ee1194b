/**
 * @ctxlog/client — the Promise API of ctxlog, for code that does not use Effect.
 *
 * ```js
 * import { createContext, Message } from "@ctxlog/client"
 *
 * const ctx = await createContext({ sqlite: "agent.db" })
 * await ctx.append("chat-1", [Message.user("Why does the build fail?")])
 * const request = await ctx.render("chat-1", { provider: "openai", model: "gpt-4o" })
 * await ctx.close()
 * ```
 *
 * Every method runs the Effect services of `@ctxlog/core`, `@ctxlog/memory`, `@ctxlog/turn` and
 * `@ctxlog/providers` on one `ManagedRuntime`; nothing is reimplemented here. A failure rejects with a
 * {@link CtxlogError}: an `Error` whose `_tag` is the typed error's tag and whose `cause` is that error.
 *
 * @since 0.1.0
 */
import { Compactor, ContextService, Message as MessageModule, type TokenCounter, type Window } from "@ctxlog/core"
import { Ctxlog } from "@ctxlog/memory"
import type { CtxBuilder } from "@ctxlog/providers"
import type { ModelCallSpan, ModelCallTarget } from "./ModelCall.js"
import { type ModelCallTrace, Policy, TemplateCompactor, Turn } from "@ctxlog/turn"
import type { TracerProvider } from "@opentelemetry/api"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { openSpan, tracerLayer } from "./ModelCall.js"

export type { ModelCallAnswer, ModelCallSpan, ModelCallTarget } from "./ModelCall.js"

/** Message constructors (`Message.user`, `Message.assistant`, `Message.toolCall`, `Message.tool`, ...). @since 0.1.0 */
export const Message = MessageModule

/** A message before it enters the log. @since 0.1.0 */
export type MessageInput = MessageModule.MessageInput

/** Which provider to render for, with its settings (`{ provider: "openai", model }`, ...). @since 0.1.0 */
export type ProviderConfig = CtxBuilder.ProviderConfig

/** Per-render options: tools, system prompt override, max output tokens. @since 0.1.0 */
export type RenderOptions = CtxBuilder.BuildOptions

/** A summarizer for `compact`, as a plain async function (default: a deterministic template, no model). @since 0.1.0 */
export interface Summarizer {
  readonly name: string
  readonly summarize: (input: Compactor.CompactionInput) => Promise<string>
}

/** Where the log lives, and how it is opened. Exactly one of `sqlite`, `postgres`, `memory`. @since 0.1.0 */
export type ContextOptions = (
  | { readonly sqlite: string; readonly postgres?: undefined; readonly memory?: undefined }
  | { readonly postgres: string; readonly sqlite?: undefined; readonly memory?: undefined }
  | { readonly memory: true; readonly sqlite?: undefined; readonly postgres?: undefined }
) & {
  /** SQLite: open read-only (appends reject). */
  readonly readonly?: boolean
  /** SQLite: `false` rejects a missing file with `DatabaseNotFound` instead of creating it. */
  readonly create?: boolean
  /**
   * SQLite: `"full"` (the default) syncs every commit to disk (`synchronous=FULL`): an append that
   * resolved survives a power loss. `"normal"` (`synchronous=NORMAL` in WAL) syncs at checkpoints only:
   * faster appends, and a power loss (not a process crash) may lose the last ones; the log stays
   * consistent either way. PostgreSQL follows the server's `synchronous_commit`.
   */
  readonly durability?: "full" | "normal"
  /** The summarizer `compact` uses. */
  readonly summarizer?: Summarizer
  /** Replaces the token counter (default `gpt-tokenizer`, o200k_base). */
  readonly tokenCounter?: Layer.Layer<TokenCounter.TokenCounter>
  /**
   * An OpenTelemetry tracer provider: ctxlog's spans (window operations, `compact {stream}` per
   * compaction, `chat {model}` per {@link Context.modelCall}) are exported through it, with the GenAI
   * attributes and the render's provenance. Off when absent. Needs `@effect/opentelemetry` and
   * `@opentelemetry/api` installed (loaded only when given).
   * @since 0.8.0
   */
  readonly tracerProvider?: TracerProvider
  /** The service name of the spans' resource (default `ctxlog`), with `tracerProvider`. @since 0.8.0 */
  readonly serviceName?: string
}

/** Options of `compact`. @since 0.1.0 */
export interface CompactOptions {
  /** Tokens of the newest history kept verbatim (default a quarter of the history). */
  readonly keepTokens?: number
  /** Upper bound of the summary (default 1,024). */
  readonly maxSummaryTokens?: number
}

/** What `compact` did. @since 0.1.0 */
export interface CompactResult {
  /** `false` when there was nothing to summarize. */
  readonly compacted: boolean
  readonly window: Window.Window
}

/** A turn's policy as data (`@ctxlog/turn`): the builder, render options, compaction, seams, recall. @since 0.4.0 */
export type TurnPolicy = Policy.Policy

/** What a turn step did: the window after its one append, the events it wrote, the tiers that ran. @since 0.4.0 */
export interface TurnStep {
  readonly window: Window.Window
  readonly events: number
  readonly tiers: ReadonlyArray<string>
}

/** A rendered, recorded request: send `body` as it is (its hash is in the log). @since 0.4.0 */
export interface TurnRender extends TurnStep {
  readonly request: CtxBuilder.AnyRequest
  readonly body: string
  /** The render's token counts: `stats.total` is the estimate to pass back as `complete`'s `estimatedInputTokens`. @since 0.4.0 */
  readonly stats: CtxBuilder.BuildStats
}

/**
 * The turn module on one stream under one policy: the same pipeline the sample agent runs, as a turn
 * session (`Turn.open`). Per user turn call `prepare`, then per model call `render`, send `body`, and
 * `complete` with the answer and the tool results (`endTurn` on the last call). Each step is one load
 * and one append. The handle counts the model calls of a turn: a `render` without `iteration` renders
 * at 0 after a `prepare` with a user message and one more after each render (at 1 before any: a handle
 * that has not seen the turn begin continues one begun before it).
 * @since 0.4.0
 */
export interface TurnHandle {
  readonly prepare: (input: ReadonlyArray<MessageInput> | Turn.Input) => Promise<TurnStep>
  readonly render: (options?: Turn.RenderOptions) => Promise<TurnRender>
  readonly complete: (completion: Turn.Completion) => Promise<TurnStep>
}

/** A context log with async methods. @since 0.1.0 */
export interface Context {
  /**
   * Open the GenAI chat span (`chat {model}`) of a model call a framework makes with a render: a
   * `TurnHandle.render` result, or a `Turn.render` result (`ModelCallTrace.RenderedCall`). The span
   * carries the conversation (the stream), the request, the render's provenance, and, once ended with
   * the answer, its id, finish reason and usage (cache read and write included). Without a
   * `tracerProvider` it records nothing.
   * @since 0.8.0
   */
  readonly modelCall: (
    stream: string,
    rendered: TurnRender | ModelCallTrace.RenderedCall | undefined,
    target: ModelCallTarget
  ) => ModelCallSpan
  /** The turn module for a stream and a policy (validated here: a bad policy throws `InvalidPolicy`). */
  readonly turn: (stream: string, policy: TurnPolicy) => TurnHandle
  /** Append messages to a stream; resolves to the window after them. */
  readonly append: (stream: string, messages: ReadonlyArray<MessageInput>) => Promise<Window.Window>
  /** The current window of a stream (empty when the stream has no events). */
  readonly load: (stream: string) => Promise<Window.Window>
  /** Drop the oldest history (whole tool rounds) until the window fits `budget` tokens. */
  readonly trim: (stream: string, budget: number) => Promise<Window.Window>
  /** Summarize all but the newest history with the summarizer. */
  readonly compact: (stream: string, options?: CompactOptions) => Promise<CompactResult>
  /** The exact request the provider would receive for the stream's window now (a preview: nothing is recorded; a turn's `render` records). */
  readonly render: (stream: string, provider: ProviderConfig, options?: RenderOptions) => Promise<CtxBuilder.AnyRequest>
  /** Close the database (the context is unusable afterwards). */
  readonly close: () => Promise<void>
  /** The Effect runtime underneath, for mixing in Effect code. */
  readonly runtime: ManagedRuntime.ManagedRuntime<Ctxlog.Companions | Compactor.Compactor | Turn.Records, unknown>
}

/** A rejected call: `_tag` is the typed error's tag (`StoreError`, `DriverMissing`, ...), `cause` the error. @since 0.1.0 */
export class CtxlogError extends Error {
  /** The tag of the typed error (or `Defect` for an unexpected failure). */
  readonly _tag: string
  constructor(tag: string, message: string, cause: unknown) {
    super(message, { cause })
    this.name = `CtxlogError(${tag})`
    this._tag = tag
  }
}

const tagOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : "Defect"

const toError = (cause: Cause.Cause<unknown>): CtxlogError => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    return new CtxlogError(tagOf(error), error instanceof Error ? error.message : String(error), error)
  }
  return new CtxlogError("Defect", Cause.pretty(cause), Cause.squash(cause))
}

const summarizerLayer = (summarizer: Summarizer): Layer.Layer<Compactor.Compactor> =>
  Layer.succeed(Compactor.Compactor, {
    name: summarizer.name,
    compact: (input) =>
      Effect.tryPromise({
        try: () => summarizer.summarize(input),
        catch: (error) =>
          new Compactor.CompactionError({
            compactor: summarizer.name,
            reason: "model",
            detail: error instanceof Error ? error.message : String(error)
          })
      }).pipe(Effect.map((summary) => ({ summary })))
  })

const storeLayer = (options: ContextOptions) => {
  const overrides = options.tokenCounter === undefined ? {} : { tokenCounter: options.tokenCounter }
  if (options.sqlite !== undefined) {
    return Ctxlog.sqlite({
      filename: options.sqlite,
      ...overrides,
      readonly: options.readonly,
      create: options.create,
      durability: options.durability
    })
  }
  if (options.postgres !== undefined) return Ctxlog.postgres({ url: options.postgres, ...overrides })
  return Ctxlog.memory(overrides)
}

/**
 * Open a context log: `{ sqlite: "agent.db" }`, `{ postgres: url }` or `{ memory: true }`. Resolves once
 * the database is open (and migrated); rejects with a {@link CtxlogError} if it cannot be.
 * @since 0.1.0
 */
export const createContext = async (options: ContextOptions): Promise<Context> => {
  const chosen = [options.sqlite, options.postgres, options.memory].filter((value) => value !== undefined)
  if (chosen.length !== 1) {
    throw new CtxlogError(
      "InvalidOptions",
      `createContext takes exactly one of sqlite, postgres, memory (got ${chosen.length})`,
      undefined
    )
  }
  const traced = options.tracerProvider !== undefined
  const tracing = traced ? await tracerLayer(options.tracerProvider, options.serviceName) : Layer.empty
  const layer = Layer.mergeAll(
    storeLayer(options),
    options.summarizer === undefined ? TemplateCompactor.layer() : summarizerLayer(options.summarizer),
    Turn.layer,
    tracing
  )
  // The render a `TurnHandle.render` result came from (its events carry the `PromptRendered`).
  const renders = new WeakMap<object, ModelCallTrace.RenderedCall>()
  const runtime = ManagedRuntime.make(layer)
  const call = async <A, E>(
    effect: Effect.Effect<A, E, Ctxlog.Companions | Compactor.Compactor | Turn.Records>
  ): Promise<A> => {
    const exit = await runtime.runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    throw toError(exit.cause)
  }
  const withService = <A, E>(use: (ctx: ContextService.ContextService.Service) => Effect.Effect<A, E>) =>
    call(Effect.flatMap(ContextService.ContextService, use))

  // Open now, so a bad path or a missing driver rejects here rather than on the first append.
  const opened = await Effect.runPromiseExit(runtime.runtimeEffect)
  if (Exit.isFailure(opened)) {
    await runtime.dispose()
    throw toError(opened.cause)
  }

  const step = (done: {
    readonly window: Window.Window
    readonly events: ReadonlyArray<unknown>
    readonly tiers: ReadonlyArray<string>
  }): TurnStep => ({
    window: done.window,
    events: done.events.length,
    tiers: done.tiers
  })

  return {
    turn: (stream, policy) => {
      const checked = Policy.validate(Policy.toJson(policy))
      if (checked._tag === "Left") throw new CtxlogError(checked.left._tag, checked.left.message, checked.left)
      // The handle is a turn session (`Turn.open`): it holds the iteration and the turn's reminder.
      const session = runtime.runSync(Turn.open(stream, checked.right))
      return {
        prepare: (input) => call(Effect.map(session.prepare("messages" in input ? input : { messages: input }), step)),
        render: (options) =>
          call(
            Effect.map(session.render(options), (rendered) => {
              const result: TurnRender = {
                ...step(rendered),
                request: rendered.built.request,
                body: rendered.body,
                stats: rendered.built.stats
              }
              if (traced) renders.set(result, rendered)
              return result
            })
          ),
        complete: (completion) => call(Effect.map(session.complete(completion), step))
      }
    },
    append: (stream, messages) =>
      withService((ctx) => Effect.map(ctx.appendMessages(stream, messages), (outcome) => outcome.window)),
    load: (stream) => withService((ctx) => ctx.load(stream)),
    trim: (stream, budget) => call(Effect.map(Turn.trim(stream, budget), (outcome) => outcome.window)),
    compact: (stream, compactOptions = {}) =>
      call(
        Effect.map(Turn.compact(stream, compactOptions), (result) => ({
          compacted: result._tag === "Compacted",
          window: result.window
        }))
      ),
    render: (stream, provider, renderOptions) =>
      call(Effect.map(Turn.preview(stream, provider, renderOptions), (built) => built.request)),
    modelCall: (stream, rendered, target) =>
      openSpan(
        runtime,
        traced,
        stream,
        rendered === undefined ? undefined : (renders.get(rendered) ?? ("built" in rendered ? rendered : undefined)),
        target
      ),
    close: () => runtime.dispose(),
    runtime
  }
}
