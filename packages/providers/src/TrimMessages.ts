/**
 * LangChain's `trimMessages`, with LangChain's meaning, over ctxlog messages: keep the first or the
 * last messages that fit `maxTokens` by the caller's token counter, optionally a partial message (its
 * first or last parts, else its text cut by a text splitter), ending on or starting at a role, keeping
 * a leading system message. A pure function: it decides what a caller sends, and records nothing (an
 * agent that trims its window uses `ContextService.trimHistory` / the turn's fit, which keep tool
 * pairs whole and log what they removed).
 *
 * The algorithm follows `@langchain/core` 1.x (`dist/messages/transformers.js`: `_firstMaxTokens`,
 * `_lastMaxTokens`) step for step, including its choices that may surprise: `strategy: "last"` with
 * `allowPartial` keeps the *first* parts of the partial message (LangChain reverses the blocks and
 * then takes from the end), and a message cut by the text splitter becomes one text part. Rules by
 * which ctxlog differs: the input is never mutated (LangChain rewrites the partial message it tried),
 * and the result is an `Either` with a typed `TrimOptionsError` where LangChain throws.
 *
 * @since 0.4.0
 */
import { Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/** A role, by its ctxlog name or LangChain's message type (`human`, `ai`, `developer`). @since 0.4.0 */
export type RoleName = Message.Role | "human" | "ai" | "developer"

/** What {@link trimMessages} trims: anything with a role and parts (stored messages or inputs). @since 0.4.0 */
export interface Trimmable {
  readonly role: Message.Role
  readonly parts: ReadonlyArray<Message.Part>
}

/** LangChain's trim options. @since 0.4.0 */
export interface Options<M extends Trimmable> {
  readonly maxTokens: number
  /** Tokens of a list of messages (LangChain's list token counter). */
  readonly tokenCounter: (messages: ReadonlyArray<M>) => number
  /** Keep the first or the last messages. Default `last`. */
  readonly strategy?: "first" | "last"
  /** Keep part of the message that does not fit whole: its first (or last) parts, else its text cut. */
  readonly allowPartial?: boolean
  /** The role(s) the result must end on (trailing messages of other roles are dropped). */
  readonly endOn?: RoleName | ReadonlyArray<RoleName>
  /** `last` only: the role(s) the result must start on (after a kept system message). */
  readonly startOn?: RoleName | ReadonlyArray<RoleName>
  /** `last` only: keep a system message at index 0. Default false. */
  readonly includeSystem?: boolean
  /** Cut a text into pieces that join back to it (default: lines, each keeping its newline). */
  readonly textSplitter?: (text: string) => ReadonlyArray<string>
}

/** Options that contradict each other (LangChain throws for these). @since 0.4.0 */
export class TrimOptionsError extends Schema.TaggedError<TrimOptionsError>()("TrimOptionsError", {
  option: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `trimMessages: ${this.option}: ${this.detail}`
  }
}

/** LangChain's default text splitter: lines, each but the last keeping its newline. @since 0.4.0 */
export const splitLines = (text: string): ReadonlyArray<string> => {
  const lines = text.split("\n")
  return lines.map((line, index) => (index < lines.length - 1 ? `${line}\n` : line))
}

const roleOf = (name: RoleName): Message.Role =>
  name === "human" ? "user" : name === "ai" ? "assistant" : name === "developer" ? "system" : name

const roles = (names: RoleName | ReadonlyArray<RoleName>): ReadonlySet<Message.Role> =>
  new Set((typeof names === "string" ? [names] : names).map(roleOf))

/** A message with other parts; a stored message's token count follows its parts. */
const withParts = <M extends Trimmable>(message: M, parts: ReadonlyArray<Message.Part>, count: (m: M) => number): M => {
  const next = { ...message, parts }
  return "tokens" in message ? { ...next, tokens: count(next) } : next
}

interface FirstOptions<M extends Trimmable> {
  readonly maxTokens: number
  readonly tokenCounter: (messages: ReadonlyArray<M>) => number
  readonly textSplitter: (text: string) => ReadonlyArray<string>
  readonly partialStrategy: "first" | "last" | undefined
  readonly endOn: ReadonlySet<Message.Role> | undefined
}

// `_firstMaxTokens`: the longest prefix that fits, then a partial message, then back to `endOn`.
const firstMaxTokens = <M extends Trimmable>(
  messages: ReadonlyArray<M>,
  options: FirstOptions<M>
): ReadonlyArray<M> => {
  const { maxTokens, tokenCounter, textSplitter, partialStrategy, endOn } = options
  const count = (message: M) => tokenCounter([message])
  let kept: ReadonlyArray<M> = messages
  let idx = 0
  for (let cut = 0; cut < messages.length; cut += 1) {
    if (tokenCounter(cut > 0 ? messages.slice(0, -cut) : messages) <= maxTokens) {
      idx = messages.length - cut
      break
    }
  }
  const excluded = kept[idx]
  if (excluded !== undefined && idx < kept.length && partialStrategy !== undefined) {
    let includedPartial = false
    // LangChain tries blocks only when the content is an array: more than one part here.
    if (excluded.parts.length > 1) {
      const reversed = partialStrategy === "last" ? [...excluded.parts].reverse() : excluded.parts
      for (let i = 1; i <= reversed.length; i += 1) {
        const partial = partialStrategy === "first" ? reversed.slice(0, i) : reversed.slice(-i)
        const sliced = [...kept.slice(0, idx), withParts(excluded, partial, count)]
        if (tokenCounter(sliced) <= maxTokens) {
          kept = sliced
          idx += 1
          includedPartial = true
        } else break
      }
    }
    if (!includedPartial) {
      const text = excluded.parts.find((part): part is Message.TextPart => part.type === "text" && part.text.length > 0)
      if (text !== undefined) {
        const splits = [...textSplitter(text.text)]
        if (partialStrategy === "last") splits.reverse()
        for (let step = 0; step < splits.length - 1; step += 1) {
          splits.pop()
          const cutText = partialStrategy === "last" ? [...splits].reverse().join("") : splits.join("")
          const candidate = withParts(excluded, [Message.text(cutText)], count)
          if (tokenCounter([...kept.slice(0, idx), candidate]) <= maxTokens) {
            kept = [...kept.slice(0, idx), candidate]
            idx += 1
            break
          }
        }
      }
    }
  }
  if (endOn !== undefined) {
    while (idx > 0 && !endOn.has(kept[idx - 1]?.role ?? "system")) idx -= 1
  }
  return kept.slice(0, idx)
}

/**
 * Trim messages as LangChain's `trimMessages` does (see the module doc for where ctxlog differs).
 * @since 0.4.0
 */
export const trimMessages = <M extends Trimmable>(
  messages: ReadonlyArray<M>,
  options: Options<M>
): Either.Either<ReadonlyArray<M>, TrimOptionsError> => {
  const strategy = options.strategy ?? "last"
  if (options.startOn !== undefined && strategy === "first") {
    return Either.left(new TrimOptionsError({ option: "startOn", detail: "only with strategy last" }))
  }
  if (options.includeSystem === true && strategy === "first") {
    return Either.left(new TrimOptionsError({ option: "includeSystem", detail: "only with strategy last" }))
  }
  if (!Number.isFinite(options.maxTokens) || options.maxTokens < 0) {
    return Either.left(new TrimOptionsError({ option: "maxTokens", detail: "must be a finite number ≥ 0" }))
  }
  const textSplitter = options.textSplitter ?? splitLines
  const allowPartial = options.allowPartial === true
  if (strategy === "first") {
    return Either.right(
      firstMaxTokens(messages, {
        maxTokens: options.maxTokens,
        tokenCounter: options.tokenCounter,
        textSplitter,
        partialStrategy: allowPartial ? "first" : undefined,
        endOn: options.endOn === undefined ? undefined : roles(options.endOn)
      })
    )
  }
  // `_lastMaxTokens`: drop to `endOn`, reverse (a leading system message stays first), take the first
  // maxTokens of the reversed list with `startOn` as its end, reverse back.
  let copy = [...messages]
  if (options.endOn !== undefined) {
    const endOn = roles(options.endOn)
    while (copy.length > 0 && !endOn.has(copy[copy.length - 1]?.role ?? "system")) copy = copy.slice(0, -1)
  }
  const swappedSystem = options.includeSystem === true && copy[0]?.role === "system"
  const reversed = swappedSystem ? [...copy.slice(0, 1), ...copy.slice(1).reverse()] : [...copy].reverse()
  const kept = firstMaxTokens(reversed, {
    maxTokens: options.maxTokens,
    tokenCounter: options.tokenCounter,
    textSplitter,
    partialStrategy: allowPartial ? "last" : undefined,
    endOn: options.startOn === undefined ? undefined : roles(options.startOn)
  })
  return Either.right(swappedSystem ? [...kept.slice(0, 1), ...kept.slice(1).reverse()] : [...kept].reverse())
}
