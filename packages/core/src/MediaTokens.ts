/**
 * What images and documents cost in tokens, by each provider's published formula. A message's tokens
 * are counted once, when it enters the log, so these run once per image; replay never decodes one.
 *
 * - Anthropic: an image whose long edge is over 1568 px, or that would cost over ~1600 tokens, is
 *   scaled down first (aspect kept); the cost is `width × height / 750`.
 * - OpenAI: `low` detail costs 85; `high` (and `auto`, counted as `high` to stay on the safe side)
 *   scales the image to fit 2048 × 2048, then its shortest side to 768 (never up), and costs
 *   `85 + 170 ×` the number of 512 px tiles.
 *
 * Dimensions come from the part (`width`, `height`) or from the header of base64 data (PNG, JPEG,
 * GIF, WebP, via `image-size`); an image whose size cannot be known (a URL) costs the formula's most.
 *
 * @since 0.3.0
 */
import { imageSize } from "image-size"
import { allMediaOf, type DocumentPart, type ImagePart, type Part } from "./Message.js"

/** Whose formula prices images. @since 0.3.0 */
export type MediaFormula = "anthropic" | "openai"

/** Pixel dimensions. @since 0.3.0 */
export interface Dimensions {
  readonly width: number
  readonly height: number
}

/** Anthropic's long-edge limit before scaling (px). @since 0.3.0 */
export const anthropicMaxEdge = 1568
/** Anthropic's most tokens for one image (it scales larger ones down). @since 0.3.0 */
export const anthropicMaxImageTokens = 1600
/** OpenAI's fixed cost of a `low` detail image, and the base of a `high` one. @since 0.3.0 */
export const openaiBaseTokens = 85
/** OpenAI's cost of one 512 px tile. @since 0.3.0 */
export const openaiTileTokens = 170
/** Tokens counted per document page (Anthropic documents 1,500–3,000 for a page of text and its image). @since 0.3.0 */
export const documentPageTokens = 2000

/** Anthropic: scale to the long-edge and token limits, then `width × height / 750`. @since 0.3.0 */
export const anthropicImageTokens = (size: Dimensions | undefined): number => {
  if (size === undefined) return anthropicMaxImageTokens
  let { width, height } = size
  const edge = Math.max(width, height)
  if (edge > anthropicMaxEdge) {
    const scale = anthropicMaxEdge / edge
    width = Math.max(1, Math.floor(width * scale))
    height = Math.max(1, Math.floor(height * scale))
  }
  return Math.min(anthropicMaxImageTokens, Math.max(1, Math.ceil((width * height) / 750)))
}

/** OpenAI: 85 for `low`; else fit 2048, shortest side to 768, `85 + 170 × tiles`. @since 0.3.0 */
export const openaiImageTokens = (size: Dimensions | undefined, detail: "auto" | "low" | "high" = "auto"): number => {
  if (detail === "low") return openaiBaseTokens
  let { width, height } = size ?? { width: 2048, height: 2048 }
  const longest = Math.max(width, height)
  if (longest > 2048) {
    width = (width * 2048) / longest
    height = (height * 2048) / longest
  }
  const shortest = Math.min(width, height)
  if (shortest > 768) {
    width = (width * 768) / shortest
    height = (height * 768) / shortest
  }
  const tiles = Math.ceil(Math.floor(width) / 512) * Math.ceil(Math.floor(height) / 512)
  return openaiBaseTokens + openaiTileTokens * Math.max(1, tiles)
}

// JPEG keeps its size in a frame header that may follow a large EXIF block (APP1 is at most 64 KiB):
// decode that much first, and everything only when the header is not in it.
const headerChars = 128 * 1024

const decodeBase64 = (data: string): Uint8Array | undefined => {
  try {
    const binary = atob(data.replace(/\s+/g, ""))
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  } catch {
    return undefined
  }
}

const sizeOfBytes = (bytes: Uint8Array): Dimensions | undefined => {
  try {
    const { width, height } = imageSize(bytes)
    return width > 0 && height > 0 ? { width, height } : undefined
  } catch {
    return undefined
  }
}

/**
 * The dimensions of base64 image data (PNG, JPEG, GIF, WebP and the other formats `image-size`
 * reads), or undefined when the header cannot be read.
 * @since 0.3.0
 */
export const dimensionsOfBase64 = (data: string): Dimensions | undefined => {
  // A prefix whose length is a multiple of 4 decodes on its own.
  const head = data.length > headerChars ? decodeBase64(data.slice(0, headerChars)) : undefined
  const fromHead = head === undefined ? undefined : sizeOfBytes(head)
  if (fromHead !== undefined) return fromHead
  const all = decodeBase64(data)
  return all === undefined ? undefined : sizeOfBytes(all)
}

/** An image's dimensions: from the part, else from its base64 header. @since 0.3.0 */
export const dimensionsOf = (image: ImagePart): Dimensions | undefined => {
  if (image.width !== undefined && image.height !== undefined) return { width: image.width, height: image.height }
  return image.source.type === "base64" ? dimensionsOfBase64(image.source.data) : undefined
}

/** Tokens of one image by a provider's formula. @since 0.3.0 */
export const imageTokens = (image: ImagePart, formula: MediaFormula): number =>
  formula === "anthropic"
    ? anthropicImageTokens(dimensionsOf(image))
    : openaiImageTokens(dimensionsOf(image), image.detail)

/** Pages of a base64 PDF, counted from its page objects (`/Type /Page`). @since 0.3.0 */
export const pdfPages = (data: string): number | undefined => {
  const bytes = decodeBase64(data)
  if (bytes === undefined) return undefined
  let text = ""
  for (let at = 0; at < bytes.length; at += 8192) {
    text += String.fromCharCode(...bytes.subarray(at, Math.min(bytes.length, at + 8192)))
  }
  const pages = text.match(/\/Type\s*\/Page(?!s)/g)?.length ?? 0
  return pages > 0 ? pages : undefined
}

/**
 * Tokens of one document: its text for a base64 `text/plain` document (counted by `countText`),
 * otherwise {@link documentPageTokens} per page (from the part, or counted in a base64 PDF; one page
 * when unknown).
 * @since 0.3.0
 */
export const documentTokens = (document: DocumentPart, countText: (text: string) => number): number => {
  const source = document.source
  if (source.type === "base64" && source.mediaType.startsWith("text/")) {
    const bytes = decodeBase64(source.data)
    if (bytes !== undefined) return countText(new TextDecoder().decode(bytes))
  }
  const pages =
    document.pages ??
    (source.type === "base64" && source.mediaType === "application/pdf" ? pdfPages(source.data) : undefined) ??
    1
  return pages * documentPageTokens
}

/** Tokens of a message's images and documents. @since 0.3.0 */
export const mediaTokensOf = (
  parts: ReadonlyArray<Part>,
  formula: MediaFormula,
  countText: (text: string) => number
): number => {
  let total = 0
  // Media inside tool results (an image a tool returned) costs what it costs in a user turn.
  for (const part of allMediaOf({ parts })) {
    if (part.type === "image") total += imageTokens(part, formula)
    else if (part.type === "document") total += documentTokens(part, countText)
  }
  return total
}
