/**
 * Token counting. A message's tokens are counted once, when it enters the log.
 *
 * `layerGpt` uses `gpt-tokenizer` (o200k_base by default, cl100k_base on request). `layerHeuristic`
 * estimates from characters, for models with no local tokenizer; its estimates are corrected by the
 * usage providers report (see `Window.calibrationRatio`).
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Caches from "./Caches.js"
import { add, work } from "./internal/work.js"
import type { Lru } from "./Lru.js"
import { type MediaFormula, mediaTokensOf } from "./MediaTokens.js"
import { type Part, tokenTextOf } from "./Message.js"

/** Tokens a chat format adds around each message (role markers). @since 0.1.0 */
export const messageOverhead = 4

/** Counts tokens. @since 0.1.0 */
export class TokenCounter extends Context.Tag("@ctxlog/core/TokenCounter")<TokenCounter, TokenCounter.Service>() {}

/** @since 0.1.0 */
export declare namespace TokenCounter {
  /** @since 0.1.0 */
  export interface Service {
    /** The tokenizer's name, e.g. `o200k_base` or `heuristic(4)`. */
    readonly name: string
    readonly count: (text: string) => number
    /**
     * Tokens of a message: its text, reasoning, tool names, inputs and outputs, its images and
     * documents (by the counter's `MediaTokens` formula), plus the per-message overhead.
     */
    readonly countMessage: (message: { readonly parts: ReadonlyArray<Part> }) => number
  }
}

const hasMedia = (parts: ReadonlyArray<Part>): boolean =>
  parts.some(
    (part) =>
      part.type === "image" ||
      part.type === "document" ||
      (part.type === "tool_result" && part.parts !== undefined && part.parts.length > 0)
  )

/**
 * Build a counter from a text counter. Images are priced by `media` (Anthropic's formula unless
 * told otherwise; see `MediaTokens`).
 * @since 0.1.0
 */
export const make = (
  name: string,
  count: (text: string) => number,
  media: MediaFormula = "anthropic"
): TokenCounter.Service => ({
  name,
  count,
  countMessage: (message) =>
    count(tokenTextOf(message)) +
    messageOverhead +
    (hasMedia(message.parts) ? mediaTokensOf(message.parts, media, count) : 0)
})

/** What {@link rememberTexts} keeps counts in: an {@link Lru} or a `Caches.lru` of strings to counts. @since 0.8.0 */
export interface TextMemo {
  get(text: string): number | undefined
  set(text: string, tokens: number): unknown
}

/**
 * `count` with each whole text counted once and kept in `memo` (a bounded LRU the caller owns, so the
 * state lives where the caller keeps it: an {@link Lru}, or a cache of the cache layer, `Caches.lru`):
 * for callers that count the same texts again and again, as a replay or a cache prediction over the
 * same recording does once per policy. A text's count depends on the text alone, so the answers are
 * `count`'s.
 * @since 0.8.0
 */
export const rememberTexts =
  (count: (text: string) => number, memo: TextMemo): ((text: string) => number) =>
  (text) => {
    let tokens = memo.get(text)
    if (tokens === undefined) {
      tokens = count(text)
      memo.set(text, tokens)
    }
    return tokens
  }

/** The encodings bundled with `gpt-tokenizer` that we expose. @since 0.1.0 */
export type Encoding = "o200k_base" | "cl100k_base"

const requireHere = createRequire(import.meta.url)

/** What an encoding's first count loads: its `countTokens` and the regex it splits a text with. */
interface Loaded {
  readonly countTokens: (text: string) => number
  readonly split: RegExp
}
const loaded = Caches.lru<Encoding, Loaded>("core.TokenCounter.loaded", 2)

/**
 * The encoding's `countTokens` and split regex, loaded on first use and kept for the process. An
 * encoding's tables cost ~60–110 ms to load and ~15–25 MB of heap; imported statically, both were paid by
 * every process that imports `@ctxlog/core`, also one that counts with the heuristic or only reads a log
 * (the inspector). `require` (gpt-tokenizer ships CommonJS beside ESM) loads synchronously, which a
 * counter must be. Each path is a literal, so bundlers still see both.
 */
const load = (encoding: Encoding): Loaded => {
  let found = loaded.peek(encoding)
  if (found === undefined) {
    const constants: { readonly O200K_TOKEN_SPLIT_REGEX: RegExp; readonly CL100K_TOKEN_SPLIT_REGEX: RegExp } =
      requireHere("gpt-tokenizer/encodingParams/constants")
    const module: { readonly countTokens: (text: string) => number } =
      encoding === "o200k_base"
        ? requireHere("gpt-tokenizer/encoding/o200k_base")
        : requireHere("gpt-tokenizer/encoding/cl100k_base")
    found = {
      countTokens: module.countTokens,
      split: encoding === "o200k_base" ? constants.O200K_TOKEN_SPLIT_REGEX : constants.CL100K_TOKEN_SPLIT_REGEX
    }
    loaded.set(encoding, found)
  }
  return found
}

/** Pre-tokens longer than this are counted every time (a long run is rare and would bloat the memo). */
const memoChunkChars = 32

/** Pre-tokens remembered per counter before the memo starts over (a few hundred KiB at most). */
const memoChunks = 8192

/**
 * `countTokens` of one encoding, memoized per pre-token. The tokenizer splits a text with its split
 * regex and counts each piece on its own (one rank lookup in a 200k-entry map, or a byte-pair merge);
 * a piece's count depends on the piece alone. So the text is split with the same regex and each piece
 * is counted by the tokenizer once, then remembered: a message costs a lookup per word in a small, warm
 * map, where the tokenizer's own lookups in its large map miss the CPU caches (the larger part of an
 * `appendMessages`, issue 24). A text that could hold a special token (`<|`) goes to the tokenizer
 * whole, with its own handling (it throws on one). The property test checks the sum equals
 * `countTokens` of the whole text.
 */
const memoized = (count: (text: string) => number, split: RegExp): ((text: string) => number) => {
  const memo = new Map<string, number>()
  return (text) => {
    if (text.includes("<|")) return count(text)
    let total = 0
    // `match` with the global split regex gives the same pieces as `matchAll`, as one array of strings:
    // no match object (index, input, groups) per piece, which was ~12 KB of garbage per message (ADR 0079).
    const chunks = text.match(split)
    if (chunks === null) return 0
    for (const chunk of chunks) {
      let tokens = memo.get(chunk)
      if (tokens === undefined) {
        tokens = count(chunk)
        add(work.chunksTokenized)
        if (chunk.length <= memoChunkChars) {
          if (memo.size >= memoChunks) memo.clear()
          memo.set(chunk, tokens)
        }
      }
      total += tokens
    }
    return total
  }
}

/**
 * A counter backed by `gpt-tokenizer` (each pre-token counted once per counter, then remembered); images
 * by OpenAI's tile formula unless told otherwise. The encoding is loaded by the first count, not by this
 * call or by importing the package.
 * @since 0.1.0
 */
export const gpt = (encoding: Encoding = "o200k_base", media: MediaFormula = "openai"): TokenCounter.Service => {
  let count: ((text: string) => number) | undefined
  return make(
    encoding,
    (text) => {
      if (count === undefined) {
        const { countTokens, split } = load(encoding)
        count = memoized(countTokens, split)
      }
      return count(text)
    },
    media
  )
}

/**
 * Characters per token of the estimate every package uses where no counter is at hand (tool schemas,
 * an override prompt, a stored output's stub): a token limit times this is a character limit.
 * @since 0.2.0
 */
export const estimateCharsPerToken = 4

/**
 * The one character estimate of tokens: `ceil(chars / charsPerToken)`. The heuristic counter, the
 * builders' count of text the log did not count, the offline model's usage and the inspector all use it.
 * @since 0.2.0
 */
export const estimate = (text: string, charsPerToken: number = estimateCharsPerToken): number =>
  Math.ceil(text.length / charsPerToken)

/** A counter that estimates `ceil(chars / charsPerToken)`; images by Anthropic's formula unless told otherwise. @since 0.1.0 */
export const heuristic = (
  charsPerToken: number = estimateCharsPerToken,
  media: MediaFormula = "anthropic"
): TokenCounter.Service => make(`heuristic(${charsPerToken})`, (text) => estimate(text, charsPerToken), media)

/** `gpt-tokenizer` with o200k_base (or the given encoding). @since 0.1.0 */
export const layerGpt = (encoding: Encoding = "o200k_base"): Layer.Layer<TokenCounter> =>
  Layer.succeed(TokenCounter, gpt(encoding))

/** The character heuristic (4 characters a token by default). @since 0.1.0 */
export const layerHeuristic = (charsPerToken: number = estimateCharsPerToken): Layer.Layer<TokenCounter> =>
  Layer.succeed(TokenCounter, heuristic(charsPerToken))
