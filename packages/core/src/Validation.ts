/**
 * Input rules checked at the boundary of every `EventLog.append` (in-memory, SQLite, PostgreSQL),
 * before anything is encoded or written, so every backend accepts and rejects the same inputs and a
 * rejected append writes nothing.
 *
 * Stream ids ({@link checkStreamId}): a string of 1 to {@link maxStreamIdLength} UTF-16 code units,
 * with no leading or trailing whitespace (ids are not trimmed silently: `"a"` and `" a"` would be two
 * streams that print alike), no control characters (U+0000–U+001F, U+007F–U+009F), no line or
 * paragraph separators (U+2028, U+2029) and no lone surrogates. Everything else is allowed, including
 * spaces inside, punctuation, quotes and non-Latin letters (ids are always bound as parameters).
 *
 * Event and metadata values ({@link checkValue}): JSON values only, the same rules everywhere (tool
 * call arguments included): `null`, booleans, finite numbers, strings, arrays without holes and plain
 * objects, at most {@link maxDepth} levels deep and without cycles. `undefined`, functions, symbols,
 * BigInt, `NaN`/`Infinity`, `Date`, `Map`, `Set`, class instances and symbol keys are rejected with
 * the path of the first offender, because JSON would drop, null or flatten them and the replayed
 * window would differ from the live one. (`-0` is stored as `0`: JSON has no negative zero.)
 *
 * Text (every string, and every object key): U+0000 (NUL) and lone surrogates are rejected on every
 * backend. PostgreSQL cannot store NUL in `text`/`jsonb`, and a lone surrogate has no UTF-8 form (both
 * drivers would store U+FFFD instead), so accepting either would not round-trip on some backend. All
 * other control characters (ANSI escapes in tool output, `\r`, U+001B…) are accepted and round-trip.
 * Callers holding arbitrary bytes can pass text through {@link sanitizeText} first.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { EventEncodeError } from "./EventCodec.js"
import { knownMessageInput } from "./internal/fastEncode.js"
import { keyProblem } from "./internal/jsonDepth.js"
import { loneSurrogate, textForbidden } from "./internal/textRules.js"
import { add, work } from "./internal/work.js"

/** Longest stream id, in UTF-16 code units. @since 0.1.0 */
export const maxStreamIdLength = 256

/** Deepest nesting of an event or metadata value (the event's own structure included). @since 0.1.0 */
export const maxDepth = 128

/** An append was refused before anything was written: a bad stream id or metadata value. @since 0.1.0 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  /** The stream id as given, shortened and escaped for display. */
  stream: Schema.String,
  /** Where: `stream`, or a path into the metadata such as `metadata.actor`. */
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `stream ${this.stream}: invalid ${this.path}: ${this.detail}`
  }
}

/** A value printed for an error: JSON-escaped, at most 64 code units of it. @since 0.1.0 */
export const excerpt = (text: string): string =>
  text.length > 64 ? `${JSON.stringify(text.slice(0, 64))}… (${text.length} chars)` : JSON.stringify(text)

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds.
const idForbidden = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

const codePoint = (char: string): string =>
  `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`

/** Why a text is refused (NUL or a lone surrogate, with its offset), or undefined. @since 0.1.0 */
export const textProblem = (text: string): string | undefined => {
  // One scan for the common case: no NUL and no surrogate at all.
  if (!textForbidden.test(text)) return undefined
  const nul = text.indexOf("\u0000")
  if (nul >= 0) return `contains NUL (U+0000) at offset ${nul}`
  const lone = loneSurrogate.exec(text)
  return lone === null ? undefined : `contains a lone surrogate ${codePoint(lone[0])} at offset ${lone.index}`
}

/** Why a stream id is refused, or undefined. @since 0.1.0 */
export const streamIdProblem = (stream: unknown): string | undefined => {
  if (typeof stream !== "string") return `must be a string, got ${typeof stream}`
  if (stream.length === 0) return "must not be empty"
  if (stream.length > maxStreamIdLength) {
    return `is ${stream.length} characters long; at most ${maxStreamIdLength} are allowed`
  }
  if (stream.trim() !== stream) return "must not begin or end with whitespace"
  const forbidden = idForbidden.exec(stream)
  if (forbidden !== null)
    return `contains the control character ${codePoint(forbidden[0])} at offset ${forbidden.index}`
  const lone = loneSurrogate.exec(stream)
  if (lone !== null) return `contains a lone surrogate ${codePoint(lone[0])} at offset ${lone.index}`
  return undefined
}

/** Check a stream id against the rules above. @since 0.1.0 */
export const checkStreamId = (stream: string): Effect.Effect<void, InvalidInput> => {
  const error = streamIdError(stream)
  return error === undefined ? Effect.void : Effect.fail(error)
}

/** The error a refused stream id fails with, or undefined. */
const streamIdError = (stream: string): InvalidInput | undefined => {
  const problem = streamIdProblem(stream)
  return problem === undefined
    ? undefined
    : new InvalidInput({
        stream: typeof stream === "string" ? excerpt(stream) : String(stream),
        path: "stream id",
        detail: problem
      })
}

const plainKey = /^[A-Za-z0-9_$-]+$/
/** Paths as `EventCodec` prints them: `message.parts.1.input.when`; odd keys JSON-escaped. */
const step = (path: string, key: string | number): string => {
  const segment = typeof key === "number" || plainKey.test(key) ? String(key) : excerpt(key)
  return path === "" ? segment : `${path}.${segment}`
}

const describeValue = (value: unknown): string => {
  if (value === undefined) return "undefined"
  if (typeof value === "function") return "a function"
  if (typeof value === "symbol") return "a symbol"
  if (typeof value === "bigint") return "a BigInt"
  if (typeof value === "number") return String(value)
  if (typeof value === "object" && value !== null) {
    const prototype: unknown = Object.getPrototypeOf(value)
    const maker: unknown =
      typeof prototype === "object" && prototype !== null ? Reflect.get(prototype, "constructor") : undefined
    return typeof maker === "function" && maker.name.length > 0
      ? `a ${maker.name}`
      : "an object with a custom prototype"
  }
  return typeof value
}

const isPlainObject = (value: object): boolean => {
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** A plain object without any own key (string or symbol, enumerable or not). */
const isEmptyPlainObject = (value: unknown): boolean => {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !isPlainObject(value)) return false
  return Reflect.ownKeys(value).length === 0
}

/**
 * Why `value` is not a storable JSON value, with the path (under `root`) of the first offender, or
 * undefined. Iterative: every depth is examined without recursion; past {@link maxDepth} it is refused.
 * @since 0.1.0
 */
export const valueProblem = (
  value: unknown,
  root: string
): { readonly path: string; readonly detail: string } | undefined => {
  // The commonest metadata, `{}`: nothing to walk (and no walker to build).
  if (isEmptyPlainObject(value)) return undefined
  add(work.valueWalks)
  // Frames of containers being walked; `onPath` holds the containers from the root to the current one. A
  // path is spelled out only for the offender (a frame knows its parent and its key under it).
  interface Frame {
    readonly value: object
    readonly parent: Frame | undefined
    readonly key: string | number
    readonly depth: number
    /** An object's keys; undefined for an array (its indexes, up to `length`). */
    readonly keys: ReadonlyArray<string> | undefined
    readonly length: number
    index: number
  }
  const pathOf = (frame: Frame | undefined): string =>
    frame?.parent === undefined ? root : step(pathOf(frame.parent), frame.key)
  const at = (frame: Frame | undefined, key: string | number | undefined): string =>
    key === undefined ? pathOf(frame) : step(pathOf(frame), key)
  const stack: Array<Frame> = []
  const onPath = new Set<object>()
  /** The child `key` of `parent` (the root: both undefined). */
  const visit = (
    child: unknown,
    parent: Frame | undefined,
    key: string | number | undefined,
    depth: number
  ): { path: string; detail: string } | undefined => {
    switch (typeof child) {
      case "string": {
        const problem = textProblem(child)
        return problem === undefined ? undefined : { path: at(parent, key), detail: `text ${problem}` }
      }
      case "boolean":
        return undefined
      case "number":
        return Number.isFinite(child) ? undefined : { path: at(parent, key), detail: `${child} is not a JSON number` }
      case "object": {
        if (child === null) return undefined
        if (onPath.has(child)) return { path: at(parent, key), detail: "circular reference" }
        if (depth > maxDepth) return { path: at(parent, key), detail: `nested deeper than ${maxDepth} levels` }
        const frame = (keys: ReadonlyArray<string> | undefined, length: number): Frame => ({
          value: child,
          parent,
          key: key ?? 0,
          depth,
          keys,
          length,
          index: 0
        })
        if (Array.isArray(child)) {
          for (let index = 0; index < child.length; index += 1) {
            if (!(index in child)) return { path: step(at(parent, key), index), detail: "array hole (sparse array)" }
          }
          onPath.add(child)
          stack.push(frame(undefined, child.length))
          return undefined
        }
        if (!isPlainObject(child))
          return { path: at(parent, key), detail: `${describeValue(child)} is not a JSON value` }
        if (Object.getOwnPropertySymbols(child).length > 0) return { path: at(parent, key), detail: "has symbol keys" }
        const keys = Object.keys(child)
        for (const name of keys) {
          const reserved = keyProblem(name)
          if (reserved !== undefined) return { path: step(at(parent, key), name), detail: reserved }
          const problem = textProblem(name)
          if (problem !== undefined) return { path: step(at(parent, key), name), detail: `key ${problem}` }
        }
        onPath.add(child)
        stack.push(frame(keys, keys.length))
        return undefined
      }
      default:
        return { path: at(parent, key), detail: `${describeValue(child)} is not a JSON value` }
    }
  }
  const first = visit(value, undefined, undefined, 1)
  if (first !== undefined) return first
  for (;;) {
    const frame = stack[stack.length - 1]
    if (frame === undefined) return undefined
    if (frame.index >= frame.length) {
      stack.pop()
      onPath.delete(frame.value)
      continue
    }
    const key = frame.keys === undefined ? frame.index : (frame.keys[frame.index] ?? 0)
    frame.index += 1
    const problem = visit(Reflect.get(frame.value, key), frame, key, frame.depth + 1)
    if (problem !== undefined) return problem
  }
}

/**
 * Why an append's input is refused, or undefined: the stream id ({@link InvalidInput}), each event (an
 * {@link EventEncodeError} naming the event's index, type and path) and the metadata ({@link InvalidInput}).
 * The plain form of {@link validateAppendInput}, for an append path that runs no effect per step.
 * `known[i]`, when given and defined, is `EventCodec.encodeKnown` of `events[i]`: that event is valid.
 * @since 0.5.0
 */
export const appendInputProblem = (
  stream: string,
  events: ReadonlyArray<unknown>,
  metadata: unknown = {},
  known?: ReadonlyArray<unknown>
): InvalidInput | EventEncodeError | undefined => {
  const streamError = streamIdError(stream)
  if (streamError !== undefined) return streamError
  for (let index = 0; index < events.length; index++) {
    // An event `EventCodec.encodeKnown` encoded passes this walk: it is not walked again.
    if (known?.[index] !== undefined) continue
    const event = events[index]
    const problem = valueProblem(event, "")
    if (problem !== undefined) {
      const tag = typeof event === "object" && event !== null ? Reflect.get(event, "_tag") : undefined
      return new EventEncodeError({
        type: typeof tag === "string" ? tag : "unknown",
        index,
        path: problem.path,
        detail: problem.detail
      })
    }
  }
  const problem = valueProblem(metadata, "metadata")
  return problem === undefined
    ? undefined
    : new InvalidInput({ stream: excerpt(stream), path: problem.path, detail: problem.detail })
}

/**
 * Check an append's input: the stream id, each event (an {@link EventEncodeError} naming the event's
 * index, type and path) and the metadata ({@link InvalidInput}). Nothing is written when this fails.
 * @since 0.1.0
 */
export const validateAppendInput = (
  stream: string,
  events: ReadonlyArray<unknown>,
  metadata: unknown = {}
): Effect.Effect<void, InvalidInput | EventEncodeError> =>
  Effect.suspend(() => {
    const problem = appendInputProblem(stream, events, metadata)
    return problem === undefined ? Effect.void : Effect.fail(problem)
  })
/**
 * Check message inputs before anything reads them (token counting stringifies tool inputs, so a BigInt,
 * a cycle or a 10,000-deep array must be refused first): each input must be an object whose `parts` is
 * an array of objects with a string `type`, and all of it a storable JSON value by the rules above. The
 * first offender fails with an {@link EventEncodeError} whose `index` is the message's and whose path is
 * `messages.<index>.…`. Every entry that takes messages (`ContextService.prepare`, `appendMessages`,
 * the Promise API's `append`) runs this before any other work. O(size of the inputs), iterative.
 * @since 0.2.0
 */
export const messagesProblem = (inputs: ReadonlyArray<unknown>): EventEncodeError | undefined => {
  if (!Array.isArray(inputs)) {
    return new EventEncodeError({ type: "message", index: 0, path: "messages", detail: "must be an array" })
  }
  for (let index = 0; index < inputs.length; index += 1) {
    const input: unknown = inputs[index]
    // The commonest input (known fields, known parts, every string storable) has nothing to name: no walk.
    if (knownMessageInput(input)) continue
    const at = (path: string, detail: string) => new EventEncodeError({ type: "message", index, path, detail })
    const root = `messages.${index}`
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return at(root, `${input === null ? "null" : describeValue(input)} is not a message`)
    }
    const parts: unknown = Reflect.get(input, "parts")
    if (!Array.isArray(parts)) return at(`${root}.parts`, "must be an array of parts")
    for (let partIndex = 0; partIndex < parts.length; partIndex += 1) {
      const part: unknown = parts[partIndex]
      if (typeof part !== "object" || part === null || typeof Reflect.get(part, "type") !== "string") {
        return at(`${root}.parts.${partIndex}`, "must be a part object with a string type")
      }
    }
    const problem = valueProblem(input, root)
    if (problem !== undefined) return at(problem.path, problem.detail)
  }
  return undefined
}

/** {@link messagesProblem} as an effect: fails with the first offender, else succeeds. @since 0.2.0 */
export const checkMessages = (inputs: ReadonlyArray<unknown>): Effect.Effect<void, EventEncodeError> =>
  Effect.suspend(() => {
    const problem = messagesProblem(inputs)
    return problem === undefined ? Effect.void : Effect.fail(problem)
  })

/**
 * Make any text storable: NUL becomes U+2400 (␀) and each lone surrogate U+FFFD, so text read from
 * arbitrary bytes can be appended instead of refused. Text that needs no change is returned as is.
 * @since 0.1.0
 */
export const sanitizeText = (text: string): string =>
  textProblem(text) === undefined
    ? text
    : text.replaceAll("\u0000", "\u2400").replace(new RegExp(loneSurrogate.source, "g"), "\ufffd")
