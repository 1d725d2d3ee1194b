/**
 * The stored form of events, and the upcaster chain that lets a log written by an older release replay.
 *
 * A stored event is `{ type, schemaVersion, data }` where `data` is JSON text: the exact bytes a store
 * writes and hashes. Decoding runs the upcasters for `type` from `schemaVersion` up to the current one,
 * then validates against the current schema; a failure names the field that was wrong.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { fastEventJson } from "./internal/fastEncode.js"
import { maxEventDepth, structureProblem } from "./internal/jsonDepth.js"
import { add, work } from "./internal/work.js"
import { type EventType, isEventType, schemaVersions, WindowEvent } from "./WindowEvent.js"

/** An event as stored. @since 0.1.0 */
export interface StoredEvent {
  readonly type: string
  readonly schemaVersion: number
  /** JSON text. */
  readonly data: string
}

/** Where a stored event came from, for error messages. @since 0.1.0 */
export interface Location {
  readonly stream?: string
  readonly version?: number
  readonly line?: number
}

/**
 * A stored event could not be decoded. `path` names the offending field (`message.parts.0.type`), and
 * `stream`/`version`/`line` say where the event was.
 * @since 0.1.0
 */
export class EventDecodeError extends Schema.TaggedError<EventDecodeError>()("EventDecodeError", {
  type: Schema.String,
  schemaVersion: Schema.Number,
  path: Schema.String,
  detail: Schema.String,
  stream: Schema.optional(Schema.String),
  version: Schema.optional(Schema.Number),
  line: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    const where = [
      this.stream === undefined ? undefined : `stream ${this.stream}`,
      this.version === undefined ? undefined : `version ${this.version}`,
      this.line === undefined ? undefined : `line ${this.line}`
    ]
      .filter((part) => part !== undefined)
      .join(", ")
    const field = this.path === "" ? "" : ` at "${this.path}"`
    return `cannot decode ${this.type} v${this.schemaVersion}${where === "" ? "" : ` (${where})`}${field}: ${this.detail}`
  }
}

/** An event handed to a store does not match its schema; nothing was written. @since 0.1.0 */
export class EventEncodeError extends Schema.TaggedError<EventEncodeError>()("EventEncodeError", {
  type: Schema.String,
  index: Schema.Number,
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `event #${this.index} (${this.type}) is malformed at "${this.path}": ${this.detail}`
  }
}

/**
 * Moves the JSON of one event type from `fromVersion` to `fromVersion + 1`.
 * @since 0.1.0
 */
export interface Upcaster {
  readonly type: EventType
  readonly fromVersion: number
  readonly up: (data: unknown) => unknown
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * MessageAppended v1 (0.0.x releases) stored `content: string` plus optional `toolCalls` and
 * `toolCallId`; v2 stores typed `parts`.
 */
const messageAppendedV1: Upcaster = {
  type: "MessageAppended",
  fromVersion: 1,
  up: (data) => {
    if (!isRecord(data) || !isRecord(data.message)) return data
    const { content, toolCalls, toolCallId, isError, ...message } = data.message
    const parts: Array<unknown> = []
    if (typeof toolCallId === "string") {
      parts.push({
        type: "tool_result",
        toolCallId,
        content: typeof content === "string" ? content : "",
        isError: isError === true
      })
    } else if (typeof content === "string" && content.length > 0) {
      parts.push({ type: "text", text: content })
    }
    if (Array.isArray(toolCalls)) {
      for (const call of toolCalls) {
        if (isRecord(call)) parts.push({ type: "tool_call", id: call.id, name: call.name, input: call.input ?? null })
      }
    }
    return { ...data, message: { kind: "chat", ...message, parts } }
  }
}

/** MessagesInjected v1 replaced the kind in knowledge and history; v2 says which, and never touches history. */
const messagesInjectedV1: Upcaster = {
  type: "MessagesInjected",
  fromVersion: 1,
  up: (data) => (isRecord(data) ? { ...data, replacesInHistory: true } : data)
}

/** HistoryCleared v1 cleared history only; v2 names its scope (and clears the conversation by default). */
const historyClearedV1: Upcaster = {
  type: "HistoryCleared",
  fromVersion: 1,
  up: (data) => (isRecord(data) ? { ...data, scope: "history" } : data)
}

/**
 * PromptRendered v1 recorded only provider, model, tokens and the request hash. v2 adds the optional
 * `render` spec and `blobs`; a v1 event has neither, so it decodes as a render that cannot be rebuilt.
 * Any stray spec-looking field an old writer left is dropped rather than trusted.
 */
const promptRenderedV1: Upcaster = {
  type: "PromptRendered",
  fromVersion: 1,
  up: (data) => {
    if (!isRecord(data)) return data
    const { render: _render, blobs: _blobs, ...v1 } = data
    return v1
  }
}

/**
 * The event types that carry whole messages, and the schema version in which a message part could
 * first be `reasoning`, `image` or `document` (0.3.0). Widening the part union is additive: an older
 * event is already a valid newer one, so each of these upcasters passes the data through unchanged.
 */
const partsWidenedAt: ReadonlyArray<readonly [EventType, number]> = [
  ["SystemPromptSet", 1],
  ["KnowledgeSet", 1],
  ["MessageAppended", 2],
  ["MessagesInjected", 2],
  ["Compacted", 1],
  ["CompactionReverted", 1],
  ["SeamProduced", 1],
  ["SeamsRecompacted", 1],
  ["BriefingProduced", 1]
]

const partsWidened: ReadonlyArray<Upcaster> = partsWidenedAt.map(([type, fromVersion]) => ({
  type,
  fromVersion,
  up: (data) => data
}))

/**
 * The same event types, and the schema version in which a message part could first be a
 * `server_tool_call`, `server_tool_result`, `tool_approval_request` or `tool_approval_response`, a
 * text part carry `citations` and a tool result carry `parts` (0.4.0). Additive again: each upcaster
 * passes the data through; the bump makes an older release refuse a 0.4 event by its version rather
 * than by a part it does not know.
 */
const contentPartsWidenedAt: ReadonlyArray<readonly [EventType, number]> = [
  ["SystemPromptSet", 2],
  ["KnowledgeSet", 2],
  ["MessageAppended", 3],
  ["MessagesInjected", 3],
  ["Compacted", 2],
  ["CompactionReverted", 2],
  ["SeamProduced", 2],
  ["SeamsRecompacted", 2],
  ["BriefingProduced", 2]
]

const contentPartsWidened: ReadonlyArray<Upcaster> = contentPartsWidenedAt.map(([type, fromVersion]) => ({
  type,
  fromVersion,
  up: (data) => data
}))

/**
 * The same event types, and the schema version in which a message could first carry a `name` and
 * opaque `providerOptions` (on the message and on its parts; 0.8.0). Additive: each upcaster passes
 * the data through; the bump makes an older release refuse such an event by its version rather than
 * drop the provider data it does not know.
 */
const providerDataWidenedAt: ReadonlyArray<readonly [EventType, number]> = [
  ["SystemPromptSet", 3],
  ["KnowledgeSet", 3],
  ["MessageAppended", 4],
  ["MessagesInjected", 4],
  ["Compacted", 3],
  ["CompactionReverted", 3],
  ["SeamProduced", 3],
  ["SeamsRecompacted", 3],
  ["BriefingProduced", 3]
]

const providerDataWidened: ReadonlyArray<Upcaster> = providerDataWidenedAt.map(([type, fromVersion]) => ({
  type,
  fromVersion,
  up: (data) => data
}))

/**
 * The same event types, and the schema version in which a message could first be of kind `skill` (the
 * skills a turn places; 0.8.0, ADR 0126) and carry a provider-specific `custom` part (ai 7's, kept by
 * the AI SDK adapter; 0.8.0). Additive: each upcaster passes the data through; the bump makes an older
 * release refuse such an event by its version rather than fail on a kind or part it does not know.
 */
const skillKindAddedAt: ReadonlyArray<readonly [EventType, number]> = [
  ["SystemPromptSet", 4],
  ["KnowledgeSet", 4],
  ["MessageAppended", 5],
  ["MessagesInjected", 5],
  ["Compacted", 5],
  ["CompactionReverted", 5],
  ["SeamProduced", 5],
  ["SeamsRecompacted", 5],
  ["BriefingProduced", 4]
]

const skillKindAdded: ReadonlyArray<Upcaster> = skillKindAddedAt.map(([type, fromVersion]) => ({
  type,
  fromVersion,
  up: (data) => data
}))

/**
 * PromptRendered v2 had no `serverContext`: a v2 render asked for no server-side context management.
 * A stray field an old writer left is dropped rather than trusted.
 */
const promptRenderedV2: Upcaster = {
  type: "PromptRendered",
  fromVersion: 2,
  up: (data) => {
    if (!isRecord(data)) return data
    const { serverContext: _serverContext, ...v2 } = data
    return v2
  }
}

/**
 * PromptRendered v3's server context had no `clearThinking`: a v3 render asked for no thinking-block
 * clearing. A stray field an old writer left is dropped rather than trusted.
 */
const promptRenderedV3: Upcaster = {
  type: "PromptRendered",
  fromVersion: 3,
  up: (data) => {
    if (!isRecord(data) || !isRecord(data.serverContext)) return data
    const { clearThinking: _clearThinking, ...v3 } = data.serverContext
    return { ...data, serverContext: v3 }
  }
}

/**
 * PromptRendered v4's render spec had no `cacheHints`: a v4 render placed only the builder's own
 * breakpoints. A stray field an old writer left is dropped rather than trusted.
 */
const promptRenderedV4: Upcaster = {
  type: "PromptRendered",
  fromVersion: 4,
  up: (data) => {
    if (!isRecord(data) || !isRecord(data.render)) return data
    const { cacheHints: _cacheHints, ...v4 } = data.render
    return { ...data, render: v4 }
  }
}

/**
 * CompactionReverted v4 had no `seams`: an undo of v4 gave the restored messages no seam entry. A stray
 * field an old writer left is dropped rather than trusted.
 */
const compactionRevertedV4: Upcaster = {
  type: "CompactionReverted",
  fromVersion: 4,
  up: (data) => {
    if (!isRecord(data)) return data
    const { seams: _seams, ...v4 } = data
    return v4
  }
}

/** UsageReported v1 had no `contextEdits`: the provider edited nothing (a stray field is dropped). */
const usageReportedV1: Upcaster = {
  type: "UsageReported",
  fromVersion: 1,
  up: (data) => {
    if (!isRecord(data)) return data
    const { contextEdits: _contextEdits, ...v1 } = data
    return v1
  }
}

/** UsageReported v2 had no `cacheWrite1hTokens`: the TTL split was not recorded (a stray field is dropped). */
const usageReportedV2: Upcaster = {
  type: "UsageReported",
  fromVersion: 2,
  up: (data) => {
    if (!isRecord(data)) return data
    const { cacheWrite1hTokens: _cacheWrite1hTokens, ...v2 } = data
    return v2
  }
}

/**
 * The event types that replace or remove window messages, and their versions before they could carry a
 * `receipt` (issue 39, ADR 0102). An older event gave no receipt: a stray field an old writer left is
 * dropped rather than trusted.
 */
const receiptAddedAt: ReadonlyArray<readonly [EventType, number]> = [
  ["MessagesRemoved", 1],
  ["HistoryTrimmed", 1],
  ["ToolOutputPruned", 1],
  ["MediaPruned", 1],
  ["Compacted", 4],
  ["SeamProduced", 4],
  ["SeamsRecompacted", 4],
  ["CycleAdvanced", 1]
]

/**
 * CompactionFailed v1 knew no `seam` tier: a v1 event is a valid v2 one. The bump makes an older release
 * refuse a seam's refusal by its version rather than by a tier it does not know.
 */
const compactionFailedV1: Upcaster = { type: "CompactionFailed", fromVersion: 1, up: (data) => data }

/**
 * CompactionDecided v1 knew the threshold tiers and the turn's steps only: a v1 event is a valid v2 one
 * (ADR 0148 widened `tier` with `seam`, `fit`, `memory` and `step` with `load`).
 */
const compactionDecidedV1: Upcaster = { type: "CompactionDecided", fromVersion: 1, up: (data) => data }

const receiptAdded: ReadonlyArray<Upcaster> = receiptAddedAt.map(([type, fromVersion]) => ({
  type,
  fromVersion,
  up: (data) => {
    if (!isRecord(data)) return data
    const { receipt: _receipt, ...before } = data
    return before
  }
}))

/** The built-in upcasters, oldest first. @since 0.1.0 */
export const upcasters: ReadonlyArray<Upcaster> = [
  messageAppendedV1,
  messagesInjectedV1,
  historyClearedV1,
  promptRenderedV1,
  ...partsWidened,
  promptRenderedV2,
  usageReportedV1,
  promptRenderedV3,
  ...contentPartsWidened,
  promptRenderedV4,
  ...providerDataWidened,
  compactionRevertedV4,
  usageReportedV2,
  ...receiptAdded,
  compactionFailedV1,
  ...skillKindAdded,
  compactionDecidedV1
]

const decodeEvent = Schema.decodeUnknownEither(WindowEvent)
// Encoding an unknown value checks it against the typed side (fields, refinements, no excess keys) on
// the way: one Schema pass validates and encodes.
const encodeUnknownEvent = Schema.encodeUnknownEither(WindowEvent)

const firstIssue = (error: ParseResult.ParseError): { path: string; detail: string } => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const issue = issues[0]
  return issue === undefined
    ? { path: "", detail: error.message }
    : { path: issue.path.map(String).join("."), detail: issue.message }
}

/**
 * Decode a stored event, upcasting it first, as an `Either` (no effect per event: a store decoding a
 * page of rows loops over them).
 * @since 0.5.0
 */
export const decodeEither = (
  stored: StoredEvent,
  location: Location = {}
): Either.Either<WindowEvent, EventDecodeError> => {
  const fail = (path: string, detail: string) =>
    Either.left(
      new EventDecodeError({
        type: stored.type,
        schemaVersion: stored.schemaVersion,
        path,
        detail,
        stream: location.stream,
        version: location.version,
        line: location.line
      })
    )
  if (!isEventType(stored.type)) return fail("_tag", `unknown event type "${stored.type}"`)
  const current = schemaVersions[stored.type]
  if (!Number.isInteger(stored.schemaVersion) || stored.schemaVersion < 1 || stored.schemaVersion > current) {
    return fail("", `schema version ${stored.schemaVersion} is not between 1 and ${current}`)
  }
  let data: unknown
  try {
    data = JSON.parse(stored.data)
  } catch (cause) {
    return fail("", `data is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  for (let version = stored.schemaVersion; version < current; version++) {
    const upcaster = upcasters.find((candidate) => candidate.type === stored.type && candidate.fromVersion === version)
    if (upcaster !== undefined) data = upcaster.up(data)
  }
  // Checked before the schema walks it: a value nested thousands of levels deep would overflow the stack,
  // and a "__proto__" key would be dropped silently.
  const problem = structureProblem(data, maxEventDepth)
  if (problem !== undefined) return fail(problem.path, problem.detail)
  if (isRecord(data) && data._tag !== stored.type) {
    return fail("_tag", `data says "${String(data._tag)}" but the stored type is "${stored.type}"`)
  }
  const decoded = decodeEvent(data, { errors: "first", onExcessProperty: "error" })
  if (decoded._tag === "Left") {
    const { path, detail } = firstIssue(decoded.left)
    return fail(path, detail)
  }
  return Either.right(decoded.right)
}

/** Decode a stored event, upcasting it first. @since 0.1.0 */
export const decode = (stored: StoredEvent, location: Location = {}): Effect.Effect<WindowEvent, EventDecodeError> =>
  Effect.suspend(() => decodeEither(stored, location))

/**
 * Decode a stored event whose bytes the caller checks against their hash-chain link before it uses the
 * event (a verified fold: `EventLog.ReadOptions.verifiedByChain`). An event at its type's current
 * schema version was validated by the Schema when it was encoded for storage, and its encoded form is
 * its decoded form (no schema in `WindowEvent` transforms a field; `EventCodec.verified.property.test.ts`
 * holds every event type to it), so it is parsed and not validated a second time. An older version, a row that does
 * not parse to an object of its stored type, or anything unusual takes the full {@link decodeEither}.
 *
 * The chain is what makes this safe: an edited row fails its link, and the event is never used. Without
 * an HMAC key the chain is a plain SHA-256 chain, as the snapshots' state hashes are: it catches edits
 * and corruption, not a writer who recomputes every hash after it (ADR 0070).
 * @since 0.5.0
 */
export const decodeVerifiedEither = (
  stored: StoredEvent,
  location: Location = {}
): Either.Either<WindowEvent, EventDecodeError> => {
  if (isEventType(stored.type) && stored.schemaVersion === schemaVersions[stored.type]) {
    let data: unknown
    try {
      data = JSON.parse(stored.data)
    } catch {
      return decodeEither(stored, location)
    }
    if (isRecord(data) && data._tag === stored.type) return Either.right(data as unknown as WindowEvent)
  }
  return decodeEither(stored, location)
}

/** {@link decodeVerifiedEither} as an effect. @since 0.5.0 */
export const decodeVerified = (
  stored: StoredEvent,
  location: Location = {}
): Effect.Effect<WindowEvent, EventDecodeError> => Effect.suspend(() => decodeVerifiedEither(stored, location))

/**
 * An event of the commonest shape encoded in plain code, or undefined for any other (and for anything the
 * fast path is not sure of): a `MessageAppended` whose parts are text (without citations), tool calls
 * and tool results (without content parts). When defined, it is exactly what {@link encodeAllEither}
 * stores for the event (the same bytes), and the event passes `Validation.valueProblem`, so an append
 * may skip both for it: the Schema pass and the validation walk were about half of the CPU and of the
 * bytes allocated per append of one message (issue 24, ADR 0079). A property test holds it to the full
 * path on generated events, valid and broken.
 * @since 0.7.0
 */
export const encodeKnown = (event: unknown): StoredEvent | undefined => {
  const data = fastEventJson(event)
  return data === undefined
    ? undefined
    : { type: "MessageAppended", schemaVersion: schemaVersions.MessageAppended, data }
}

/**
 * Encode events for storage, validating each; the first malformed one fails the whole batch. The plain
 * form of {@link encodeAll}, for an append path that runs no effect per step. `known[i]`, when given and
 * defined, is {@link encodeKnown} of `events[i]`, already computed by the caller: it is used as is.
 * @since 0.5.0
 */
export const encodeAllEither = (
  events: ReadonlyArray<unknown>,
  known?: ReadonlyArray<StoredEvent | undefined>
): Either.Either<ReadonlyArray<StoredEvent>, EventEncodeError> => {
  const stored: Array<StoredEvent> = []
  for (let index = 0; index < events.length; index++) {
    const ready = known?.[index]
    if (ready !== undefined) {
      stored.push(ready)
      continue
    }
    const event = events[index]
    add(work.schemaEncodes)
    const type = isRecord(event) && typeof event._tag === "string" ? event._tag : "unknown"
    // One pass: encoding an unknown value validates it against the typed side first, so a hand-built
    // object with a wrong field (or an extra one) is caught, and its encoded form is what is stored.
    let encoded: ReturnType<typeof encodeUnknownEvent>
    try {
      encoded = encodeUnknownEvent(event, { errors: "first", onExcessProperty: "error" })
    } catch (cause) {
      // The Schema throws on a tag it cannot print (a null-prototype object): a typed error, not a defect.
      const detail = `cannot be checked against the event schema: ${cause instanceof Error ? cause.message : String(cause)}`
      return Either.left(new EventEncodeError({ type, index, path: "_tag", detail }))
    }
    if (encoded._tag === "Left") {
      const { path, detail } = firstIssue(encoded.left)
      return Either.left(new EventEncodeError({ type, index, path, detail }))
    }
    stored.push({
      type: encoded.right._tag,
      schemaVersion: schemaVersions[encoded.right._tag],
      data: JSON.stringify(encoded.right)
    })
  }
  return Either.right(stored)
}

/**
 * Encode events for storage, validating each; the first malformed one fails the whole batch.
 * @since 0.1.0
 */
export const encodeAll = (
  events: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<StoredEvent>, EventEncodeError> => Effect.suspend(() => encodeAllEither(events))

/**
 * Decode a JSON-lines export (`{ type, schemaVersion, data }` per line) with line numbers in errors.
 * Lines may end in CRLF, and a leading byte order mark is skipped.
 * @since 0.1.0
 */
export const decodeJsonLines = (text: string): Effect.Effect<ReadonlyArray<WindowEvent>, EventDecodeError> =>
  Effect.forEach(
    text
      .replace(/^\uFEFF/, "")
      .split("\n")
      .flatMap((raw, index) => (raw.trim() === "" ? [] : [{ raw, line: index + 1 }])),
    ({ raw, line }) => {
      let record: unknown
      try {
        record = JSON.parse(raw)
      } catch (cause) {
        return Effect.fail(
          new EventDecodeError({
            type: "unknown",
            schemaVersion: 0,
            path: "",
            detail: `line is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
            line
          })
        )
      }
      if (!isRecord(record) || typeof record.type !== "string" || typeof record.schemaVersion !== "number") {
        return Effect.fail(
          new EventDecodeError({
            type: "unknown",
            schemaVersion: 0,
            path: "type",
            detail: "expected { type: string, schemaVersion: number, data }",
            line
          })
        )
      }
      // JSON.stringify recurses: a value nested thousands of levels deep is refused before it.
      const problem = typeof record.data === "string" ? undefined : structureProblem(record.data, maxEventDepth)
      if (problem !== undefined) {
        return Effect.fail(
          new EventDecodeError({
            type: record.type,
            schemaVersion: record.schemaVersion,
            path: problem.path,
            detail: problem.detail,
            line
          })
        )
      }
      const data = typeof record.data === "string" ? record.data : JSON.stringify(record.data)
      return decode({ type: record.type, schemaVersion: record.schemaVersion, data }, { line })
    }
  )
