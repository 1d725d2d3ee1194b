/**
 * Tool-output truncation shared by every builder: keep the head and the tail of a long output and
 * say how much was cut, so the model knows something is missing (and roughly where).
 *
 * @since 0.1.0
 */
import type { Message } from "@ctxlog/core"
import * as Schema from "effect/Schema"

/** Per-tool character limits, with a default for tools not listed: one schema, the type derived (ADR 0156). @since 0.1.0 */
export const Limits = Schema.Struct({
  defaultChars: Schema.Number,
  perTool: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Number }), { exact: true }),
  /** Share of the kept characters taken from the head (the rest from the tail). Default 0.6. */
  headRatio: Schema.optionalWith(Schema.Number, { exact: true })
})
/** @since 0.1.0 */
export type Limits = typeof Limits.Type

/** The marker put where characters were cut. @since 0.1.0 */
export const marker = (elided: number): string => `\n[... ${elided} chars elided ...]\n`

/**
 * Keep at most `maxChars` characters of `text` (marker excluded): the head and the tail, with a
 * marker naming how many characters were cut in between. Text that fits is returned unchanged.
 * @since 0.1.0
 */
export const headTail = (text: string, maxChars: number, headRatio = 0.6): string => {
  if (text.length <= maxChars) return text
  const keep = Math.max(0, Math.floor(maxChars))
  const head = Math.floor(keep * Math.min(1, Math.max(0, headRatio)))
  const tail = keep - head
  const elided = text.length - head - tail
  return `${text.slice(0, head)}${marker(elided)}${tail === 0 ? "" : text.slice(text.length - tail)}`
}

/** The character limit for a tool. @since 0.1.0 */
export const limitFor = (limits: Limits, toolName: string): number =>
  limits.perTool !== undefined && Object.hasOwn(limits.perTool, toolName)
    ? (limits.perTool[toolName] ?? limits.defaultChars)
    : limits.defaultChars

/** Truncate a tool result's content to the limit of its tool. @since 0.1.0 */
export const truncateToolOutput = (
  result: Message.ToolResultPart,
  toolName: string,
  limits: Limits
): Message.ToolResultPart => {
  const content = headTail(result.content, limitFor(limits, toolName), limits.headRatio)
  return content === result.content ? result : { ...result, content }
}
