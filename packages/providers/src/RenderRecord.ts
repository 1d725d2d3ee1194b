/**
 * Recording renders and usage in the log. `recordRender` appends `PromptRendered { provider, model,
 * tokens, sha256 }` where the hash covers the exact bytes the clients send ({@link serialize}). Given
 * the builder's config and the render options it also records the `render` spec that rebuilds the
 * request ({@link rebuild}); tool schemas are stored once per stream as a content-addressed blob.
 * `recordUsage` appends `UsageReported`, whose running totals (`window.calibration`) correct later
 * token estimates for models with no local tokenizer.
 *
 * @since 0.1.0
 */
import {
  Caches,
  ContextService,
  EventHash,
  EventLog,
  LanguageModel,
  Message,
  Window,
  type WindowEvent
} from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { type BuildOptions, type BuildStats, type Built, forProvider, ProviderConfig } from "./CtxBuilder.js"
import * as requestBody from "./internal/requestBody.js"

/**
 * The exact request body the clients send: `JSON.stringify` of the built request. A request a
 * builder's render cache built is assembled from its messages' kept JSON (the same bytes, without
 * serializing the whole request again).
 * @since 0.1.0
 */
export const serialize = (request: unknown): string => requestBody.bodyOf(request) ?? JSON.stringify(request)

/**
 * SHA-256 (hex) of the serialized request. A request a render cache built is hashed from the kept
 * hash state of its unchanged prefix (the same digest, without serializing the whole request again).
 * @since 0.1.0
 */
export const requestSha256 = (request: unknown): string =>
  requestBody.sha256Of(request) ?? EventHash.sha256(serialize(request))

/** Who served (or will serve) a request. @since 0.1.0 */
export interface Target {
  readonly provider: string
  readonly model: string
}

const ToolSpecs = Schema.Array(LanguageModel.ToolSpec)

const decodeProviderConfig = Schema.decodeUnknownEither(ProviderConfig, { onExcessProperty: "error" })

/** The builder config a render spec recorded, if it decodes. @since 0.2.0 */
export const decodeConfig = (spec: WindowEvent.RenderSpec): ProviderConfig | undefined => {
  const decoded = decodeProviderConfig({ ...spec.config, provider: spec.builder })
  return Either.isRight(decoded) ? decoded.right : undefined
}
const encodeConfig = Schema.encodeSync(ProviderConfig)
const decodeTools = Schema.decodeUnknownEither(Schema.parseJson(ToolSpecs))
const isJsonObject = Schema.is(Schema.Record({ key: Schema.String, value: Message.JsonValue }))

/** The builder config and options of a render: what {@link recordRender} stores to rebuild it. @since 0.2.0 */
export interface RenderInput {
  readonly config: ProviderConfig
  readonly options?: BuildOptions
}

/** The JSON text of the tools blob: the tool specs in order. @since 0.2.0 */
export const toolsBlob = (tools: ReadonlyArray<LanguageModel.ToolSpec>): WindowEvent.RenderBlob => {
  const content = JSON.stringify(tools)
  return { sha256: EventHash.sha256(content), content }
}

/** The render spec of a config and options, and the blobs it references. @since 0.2.0 */
export const specOf = (
  input: RenderInput
): { readonly spec: WindowEvent.RenderSpec; readonly blobs: ReadonlyArray<WindowEvent.RenderBlob> } => {
  const options = input.options ?? {}
  const config: unknown = encodeConfig(input.config)
  const blob = options.tools === undefined ? undefined : toolsBlob(options.tools)
  return {
    spec: {
      builder: input.config.provider,
      config: isJsonObject(config) ? config : {},
      // The spec is part of the event (hashed, and a replay decodes it without undefined keys): absent stays absent.
      ...(options.systemPrompt === undefined ? {} : { systemPrompt: options.systemPrompt }),
      ...(options.turnReminder === undefined ? {} : { turnReminder: options.turnReminder }),
      ...(blob === undefined ? {} : { toolsSha256: blob.sha256 }),
      ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.cacheHints === undefined || options.cacheHints.length === 0 ? {} : { cacheHints: options.cacheHints })
    },
    blobs: blob === undefined ? [] : [blob]
  }
}

// Blob hashes each stream already holds, per log: filled by one read of the stream the first time a
// process records a render into it, then kept up to date by this process's own appends. A miss only
// stores a blob again, which rebuilds the same way.
const storedBlobs = Caches.weak<object, Map<string, Set<string>>>("providers.RenderRecord.storedBlobs")

const blobsOf = (event: WindowEvent.WindowEvent): ReadonlyArray<WindowEvent.RenderBlob> =>
  event._tag === "PromptRendered" ? (event.blobs ?? []) : []

const knownBlobs = (stream: EventLog.StreamId) =>
  Effect.flatMap(Effect.serviceOption(EventLog.EventLog), (log) => {
    if (Option.isNone(log)) return Effect.succeed(new Set<string>())
    const byStream = storedBlobs.get(log.value) ?? new Map<string, Set<string>>()
    storedBlobs.set(log.value, byStream)
    const cached = byStream.get(stream)
    if (cached !== undefined) return Effect.succeed(cached)
    return log.value.read(stream).pipe(
      Stream.runFold(new Set<string>(), (known, envelope) => {
        for (const blob of blobsOf(envelope.event)) known.add(blob.sha256)
        return known
      }),
      Effect.tap((known) => Effect.sync(() => byStream.set(stream, known)))
    )
  })

/**
 * Append `PromptRendered` for a built request. With `input` (the builder config and the options the
 * request was built with) the event also records how to rebuild it; tool schemas go into a blob the
 * first time this stream sees them.
 * @since 0.1.0
 */
export const recordRender = (
  stream: EventLog.StreamId,
  built: Built<unknown>,
  target: Target,
  input?: RenderInput
): Effect.Effect<ContextService.Outcome, ContextService.LogError, ContextService.ContextService> =>
  Effect.gen(function* () {
    const service = yield* ContextService.ContextService
    const recorded = input === undefined ? undefined : specOf(input)
    const known = recorded === undefined || recorded.blobs.length === 0 ? new Set<string>() : yield* knownBlobs(stream)
    const blobs = recorded?.blobs.filter((blob) => !known.has(blob.sha256)) ?? []
    const outcome = yield* service.run(stream, () =>
      Either.right([
        {
          _tag: "PromptRendered",
          provider: target.provider,
          model: target.model,
          tokens: built.stats.tokens,
          sha256: requestSha256(built.request),
          // An event: an undefined key would make the live window differ from its replay.
          ...(recorded === undefined ? {} : { render: recorded.spec }),
          ...(blobs.length === 0 ? {} : { blobs }),
          ...(built.serverContext === undefined ? {} : { serverContext: built.serverContext })
        }
      ])
    )
    for (const blob of blobs) known.add(blob.sha256)
    return outcome
  })

/** Why a recorded render could not be rebuilt, or rebuilt to other bytes. @since 0.2.0 */
export class RenderMismatch extends Schema.TaggedError<RenderMismatch>()("RenderMismatch", {
  version: Schema.Number,
  reason: Schema.Literal("not-rebuildable", "bad-spec", "missing-blob", "invalid-request", "hash-mismatch"),
  detail: Schema.String
}) {
  override get message(): string {
    return `render at version ${this.version}: ${this.detail}`
  }
}

/** A request rebuilt from the log and checked against its recorded hash. @since 0.2.0 */
export interface Rebuilt {
  readonly version: number
  readonly request: unknown
  /** The serialized request (the hashed bytes). */
  readonly body: string
  readonly sha256: string
  readonly recordedSha256: string
  /** The rebuilt render's stats: what its prompt and output reserve take of the context window. */
  readonly stats: BuildStats
}

/**
 * Rebuild the request a `PromptRendered` event recorded, from the window just before it (the stream
 * at `version - 1`) and the blobs the stream holds by then, and check it against the recorded hash.
 * @since 0.2.0
 */
export const rebuild = (
  before: Window.Window,
  event: WindowEvent.EventOf<"PromptRendered">,
  version: number,
  blobs: ReadonlyMap<string, string>
): Either.Either<Rebuilt, RenderMismatch> => {
  const fail = (reason: RenderMismatch["reason"], detail: string) =>
    Either.left(new RenderMismatch({ version, reason, detail }))
  const spec = event.render
  if (spec === undefined) {
    return fail(
      "not-rebuildable",
      "the event records no render spec: its writer called recordRender without the builder config and options"
    )
  }
  const config = decodeProviderConfig({ ...spec.config, provider: spec.builder })
  if (Either.isLeft(config)) return fail("bad-spec", `the recorded builder config is invalid: ${config.left.message}`)
  let tools: ReadonlyArray<LanguageModel.ToolSpec> | undefined
  if (spec.toolsSha256 !== undefined) {
    const content = blobs.get(spec.toolsSha256)
    if (content === undefined) return fail("missing-blob", `the tools blob ${spec.toolsSha256} is not in the stream`)
    const decoded = decodeTools(content)
    if (Either.isLeft(decoded)) return fail("bad-spec", `the tools blob is invalid: ${decoded.left.message}`)
    tools = decoded.right
  }
  const options: BuildOptions = {
    systemPrompt: spec.systemPrompt,
    turnReminder: spec.turnReminder,
    tools,
    maxOutputTokens: spec.maxOutputTokens,
    temperature: spec.temperature,
    serverContext: event.serverContext,
    cacheHints: spec.cacheHints
  }
  const built = forProvider(config.right).build(before, options)
  if (Either.isLeft(built)) return fail("invalid-request", built.left.message)
  // Serialized whole, not from the render cache's pieces: the check stays independent of the cache.
  const body = JSON.stringify(built.right.request)
  const sha256 = EventHash.sha256(body)
  if (sha256 !== event.sha256) {
    return fail("hash-mismatch", `rebuilt request hashes to ${sha256}, the log recorded ${event.sha256}`)
  }
  return Either.right({
    version,
    request: built.right.request,
    body,
    sha256,
    recordedSha256: event.sha256,
    stats: built.right.stats
  })
}

/** Whether a render plus its output reserve fits the model's context window. @since 0.4.0 */
export const fits = (stats: BuildStats): boolean =>
  stats.total + stats.reminderTokens + stats.outputReserve <= stats.contextWindow

/** Every recorded render of a stream rebuilt and checked. @since 0.4.0 */
export interface Verification {
  readonly renders: number
  /** Renders that rebuilt to their recorded hash. */
  readonly verified: number
  readonly failures: ReadonlyArray<RenderMismatch>
  /** Versions of rebuilt renders whose prompt plus output reserve exceeded the context window. */
  readonly overWindow: ReadonlyArray<number>
}

/**
 * Rebuild every `PromptRendered` in a stream's events (in order, from version 1) and check each
 * against its hash: the check `ctxlog render` and `ctxlog verify --renders` make.
 * @since 0.4.0
 */
export const verifyAll = (
  events: Iterable<{ readonly event: WindowEvent.WindowEvent; readonly version: number }>
): Verification => {
  let window = Window.empty
  const blobs = new Map<string, string>()
  let renders = 0
  let verified = 0
  const failures: Array<RenderMismatch> = []
  const overWindow: Array<number> = []
  for (const { event, version } of events) {
    if (event._tag === "PromptRendered") {
      renders++
      collectBlobs([event], blobs)
      const rebuilt = rebuild(window, event, version, blobs)
      if (Either.isLeft(rebuilt)) failures.push(rebuilt.left)
      else {
        verified++
        if (!fits(rebuilt.right.stats)) overWindow.push(version)
      }
    }
    window = Window.evolve(window, event)
  }
  return { renders, verified, failures, overWindow }
}

/** The blobs recorded by a run of events, by hash (first one wins). @since 0.2.0 */
export const collectBlobs = (events: Iterable<WindowEvent.WindowEvent>, into = new Map<string, string>()) => {
  for (const event of events) {
    for (const blob of blobsOf(event)) if (!into.has(blob.sha256)) into.set(blob.sha256, blob.content)
  }
  return into
}

/**
 * Append `UsageReported`. `estimatedInputTokens` must be the *uncalibrated* local estimate of the
 * prompt (e.g. `built.stats.total`), so the ratio reported/estimated stays a ratio to the raw counter.
 * @since 0.1.0
 */
export const recordUsage = (
  stream: EventLog.StreamId,
  usage: LanguageModel.Usage,
  estimatedInputTokens: number,
  target: Target & { readonly contextEdits?: LanguageModel.ContextEdits | undefined }
): Effect.Effect<ContextService.Outcome, ContextService.LogError, ContextService.ContextService> =>
  Effect.flatMap(ContextService.ContextService, (service) =>
    service.run(stream, () =>
      Either.right([
        {
          _tag: "UsageReported",
          provider: target.provider,
          model: target.model,
          estimatedInputTokens: Math.max(0, Math.round(estimatedInputTokens)),
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          cacheReadTokens: usage.cacheReadTokens,
          cacheWriteTokens: usage.cacheWriteTokens,
          // An event: absent stays absent (ADR 0060).
          ...(usage.cacheWrite1hTokens === undefined ? {} : { cacheWrite1hTokens: usage.cacheWrite1hTokens }),
          ...(target.contextEdits === undefined ? {} : { contextEdits: target.contextEdits })
        }
      ])
    )
  )
