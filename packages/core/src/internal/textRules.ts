// The text rules every stored string (and object key) follows, shared by `Validation` (which names the
// offender) and the append's fast encoder (which only needs to know that there is none).

/** A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
export const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
/** NUL or any surrogate: text that does not match is storable after one scan. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what this finds.
export const textForbidden = /\u0000|[\ud800-\udfff]/

/** Whether `text` may be stored: no NUL and no lone surrogate (surrogate pairs are fine). */
export const storableText = (text: string): boolean =>
  !textForbidden.test(text) || (!text.includes("\u0000") && !loneSurrogate.test(text))
