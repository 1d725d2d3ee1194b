/**
 * `<archived_context level="N">…</archived_context>` blocks: the text form of a seam, embedded in an
 * assistant message so any provider renders it as ordinary conversation.
 *
 * @since 0.1.0
 */
import { Message } from "@ctxlog/core"

/** One archived-context block found in a message. @since 0.1.0 */
export interface Block {
  readonly level: number
  readonly attributes: { readonly [name: string]: string }
  readonly body: string
}

/** A block together with the message that carries it. @since 0.1.0 */
export interface SeamText extends Block {
  readonly messageId: string
}

const escapeAttribute = (value: string): string =>
  value.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")

const unescapeAttribute = (value: string): string =>
  value.replaceAll("&quot;", '"').replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&")

// A body that itself contains a block tag (a transcript quoting one) must not close ours early.
const escapeBody = (body: string): string =>
  body.replaceAll("<archived_context", "&lt;archived_context").replaceAll("</archived_context", "&lt;/archived_context")

/**
 * Render a block. `attributes` come after `level`, in the order given; the body is escaped so it
 * cannot open or close a block.
 * @since 0.1.0
 */
export const render = (level: number, body: string, attributes: { readonly [name: string]: string } = {}): string => {
  const extra = Object.entries(attributes)
    .map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`)
    .join("")
  return `<archived_context level="${level}"${extra}>\n${escapeBody(body.trim())}\n</archived_context>`
}

const blockPattern = /<archived_context\b([^>]*)>([\s\S]*?)<\/archived_context>/g
const attributePattern = /([A-Za-z_][\w-]*)="([^"]*)"/g

/** Every well-formed block in a text, in order. Blocks without a numeric level are skipped. @since 0.1.0 */
export const parse = (text: string): ReadonlyArray<Block> => {
  const blocks: Array<Block> = []
  for (const match of text.matchAll(blockPattern)) {
    const attributes: Record<string, string> = {}
    for (const attribute of (match[1] ?? "").matchAll(attributePattern)) {
      const [, name, value] = attribute
      if (name !== undefined && value !== undefined) attributes[name] = unescapeAttribute(value)
    }
    const level = Number(attributes.level)
    if (!Number.isInteger(level)) continue
    const { level: _level, ...rest } = attributes
    blocks.push({ level, attributes: rest, body: (match[2] ?? "").trim() })
  }
  return blocks
}

/**
 * The archived-context blocks already embedded in assistant messages, in message order.
 * @since 0.1.0
 */
export const collect = (messages: ReadonlyArray<Message.Message>): ReadonlyArray<SeamText> =>
  messages.flatMap((message) =>
    message.role === "assistant"
      ? parse(Message.textOf(message)).map((block): SeamText => ({ ...block, messageId: message.id }))
      : []
  )
