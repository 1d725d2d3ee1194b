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

/** The encodings bundled with `gpt-tokenizer` that we expose. @since 0.1.0 */
export type Encoding = "o200k_base" | "cl100k_base"

const requireHere = createRequire(import.meta.url)
const loaded = new Map<Encoding, (text: string) => number>()

/**
 * The encoding's `countTokens`, loaded on first use and kept for the process. An encoding's tables cost
 * ~60–110 ms to load and ~15–25 MB of heap; imported statically, both were paid by every process that
 * imports `@ctxlog/core`, also one that counts with the heuristic or only reads a log (the inspector).
 * `require` (gpt-tokenizer ships CommonJS beside ESM) loads synchronously, which a counter must be. Each
 * path is a literal, so bundlers still see both.
 */
const countWith = (encoding: Encoding): ((text: string) => number) => {
  let count = loaded.get(encoding)
  if (count === undefined) {
    const module: { readonly countTokens: (text: string) => number } =
      encoding === "o200k_base"
        ? requireHere("gpt-tokenizer/encoding/o200k_base")
        : requireHere("gpt-tokenizer/encoding/cl100k_base")
    count = module.countTokens
    loaded.set(encoding, count)
  }
  return count
}

/**
 * A counter backed by `gpt-tokenizer`; images by OpenAI's tile formula unless told otherwise. The
 * encoding is loaded by the first count, not by this call or by importing the package.
 * @since 0.1.0
 */
export const gpt = (encoding: Encoding = "o200k_base", media: MediaFormula = "openai"): TokenCounter.Service => {
  let count: ((text: string) => number) | undefined
  return make(
    encoding,
    (text) => {
      if (count === undefined) count = countWith(encoding)
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
