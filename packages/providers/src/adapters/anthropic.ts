/**
 * Anthropic Messages (`MessageParam[]` and the `system` blocks of the `@anthropic-ai/sdk`) ⇄ ctxlog
 * messages. Types only: the SDK is an optional peer, never loaded at run time.
 *
 * - System messages go to `system` (one text block each); the results of a tool round go into one user
 *   message (the API wants them together), each with `is_error` when the result is an error.
 * - `thinking` and `redacted_thinking` blocks become `reasoning` parts (signature or data kept) both
 *   ways; images and documents (base64 PDF, plain text, URL; the title kept) become `image` /
 *   `document` parts both ways, and media the API does not take (a `video/mp4` image) is an
 *   `AdapterError` naming the part.
 * - A `tool_result` whose content is blocks becomes a tool result made of parts (text, images,
 *   documents) and goes back as the same blocks; text citations are kept both ways.
 * - Provider-executed tools (`server_tool_use`, `mcp_tool_use` and the `*_tool_result` blocks that
 *   answer them) are `server_tool_call` / `server_tool_result` parts of provider `anthropic`; going out,
 *   server parts of another provider are an `AdapterError`. The AI SDK's form of them (a
 *   provider-executed `tool-call` and its `tool-result` output, camelCase: `web_search`, `web_fetch`,
 *   `code_execution` and its sub-tools, tool search, `advisor`, MCP) becomes Anthropic's blocks, as
 *   `@ai-sdk/anthropic` makes them; a tool or output with no block is an `AdapterError` naming the part.
 *   Tool approvals have no Anthropic form and are not sent.
 * - Kept, never dropped (since 0.8.0): request fields that are not content — `cache_control` on any
 *   block (a system block's on its message), a document's `context` and `citations` settings, a tool
 *   use's `caller`, compaction blocks — are kept as `providerOptions.anthropic` in the AI SDK's names
 *   (`cacheControl`, `context`, `citations`, `caller`, `type: "compaction"`), so what the AI SDK
 *   hands over and what `fromAnthropic` reads are sent the same way. `toAnthropic` places a cache hint
 *   on the block it sits on (a message's on its last block; one item of a tool result's content on
 *   that item's block), refuses a fifth breakpoint and one on thinking, sends
 *   `providerOptions.anthropic.citations` as text citations, and refuses by name an `anthropic`
 *   option it does not send, a speaker's `name` (Anthropic has none; a tool message's may be its
 *   tool's), and a block field `fromAnthropic` does not know. Search results and container uploads
 *   are an `AdapterError`. Other providers' options are theirs and not sent.
 * - `ToAnthropicOptions.sendReasoning` (default `true`) omits reasoning when `false`, as
 *   `@ai-sdk/anthropic`'s option; reasoning without a signature is never sent (the API takes thinking
 *   only with its signature).
 *
 * @since 0.1.0
 */
import type {
  DocumentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
  ToolResultBlockParam
} from "@anthropic-ai/sdk/resources/messages"
import { Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import { AdapterError, type AnyMessage, convertAll, isJson, jsonInput, refuse, toolNames } from "../AdapterError.js"
import { mediaBlock } from "../internal/anthropicRender.js"

/** @since 0.1.0 */
export { AdapterError }

/** A request's `system` and `messages`. @since 0.1.0 */
export interface AnthropicMessages {
  readonly system: Array<TextBlockParam>
  readonly messages: Array<MessageParam>
}

const format = "Anthropic"

/** Options of {@link toAnthropic}. @since 0.8.0 */
export interface ToAnthropicOptions {
  /**
   * Send reasoning back (`thinking` and `redacted_thinking` blocks), as `@ai-sdk/anthropic`'s
   * `sendReasoning`. Default `true`; `false` omits every reasoning part.
   */
  readonly sendReasoning?: boolean
}

type Json = Message.JsonValue
type JsonRecord = { readonly [key: string]: Json }
/** A block being built: the request shape, typed loosely until the one cast at the end. */
type Block = { readonly type: string; readonly [key: string]: unknown }

const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// Anthropic options ctxlog reads, by the owner they sit on (the AI SDK's names, which `fromAnthropic`
// also uses for the request fields it keeps). Any other `anthropic` key is refused by name; other
// namespaces are other providers' data and are not Anthropic's to send.
const cacheKeys = ["cacheControl", "cache_control"]
const documentKeys = ["title", "context", "citations"]
const optionKeys: { readonly [owner: string]: ReadonlyArray<string> } = {
  message: cacheKeys,
  text: [...cacheKeys, "citations", "type"],
  reasoning: [...cacheKeys, "signature", "redactedData"],
  tool_call: [...cacheKeys, "caller"],
  tool_result: cacheKeys,
  image: cacheKeys,
  document: [...cacheKeys, ...documentKeys],
  server_tool_call: [...cacheKeys, "caller", "type", "serverName"],
  server_tool_result: [...cacheKeys, "caller"],
  tool_approval_request: [],
  tool_approval_response: [],
  custom: []
}

/** The `anthropic` options of a message or part, checked against what its kind may carry. */
const anthropicOptions = (
  index: number,
  path: string,
  owner: string,
  options: Message.ProviderOptions | undefined
): Either.Either<JsonRecord, AdapterError> => {
  const value = options?.anthropic
  const at = `${path === "" ? "" : `${path}.`}providerOptions.anthropic`
  if (value === undefined) return Either.right({})
  if (!isRecord(value)) return Either.left(refuse(format, index, at, "Anthropic options are not an object"))
  const allowed = optionKeys[owner] ?? []
  const unknown = Object.keys(value).find((key) => !allowed.includes(key))
  if (unknown !== undefined) {
    const detail =
      unknown === "toolChanges"
        ? "mid-conversation tool changes have no form here (system messages go to the request's system)"
        : `the Anthropic option ${unknown} is not one this adapter sends`
    return Either.left(refuse(format, index, `${at}.${unknown}`, detail))
  }
  return Either.right(value)
}

const cacheOf = (options: JsonRecord): Json | undefined => options.cacheControl ?? options.cache_control

/** A block with its cache breakpoint (when hinted): the hint is sent as `cache_control`. */
const cached = (block: Block, hint: Json | undefined): Block =>
  hint === undefined || hint === null ? block : { ...block, cache_control: hint }

/** A tool call's `caller` (the AI SDK form `{ type, toolId }`) in the API's form. */
const callerOf = (index: number, path: string, options: JsonRecord): Either.Either<Block | undefined, AdapterError> => {
  const caller = options.caller
  if (caller === undefined) return Either.right(undefined)
  if (isRecord(caller) && caller.type === "direct") return Either.right({ type: "direct" })
  if (isRecord(caller) && typeof caller.type === "string" && typeof caller.toolId === "string") {
    return Either.right({ type: caller.type, tool_id: caller.toolId })
  }
  return Either.left(
    refuse(format, index, `${path}.providerOptions.anthropic.caller`, "a caller is not { type, toolId }")
  )
}

const withCaller = (block: Block, caller: Block | undefined): Block =>
  caller === undefined ? block : { ...block, caller }

/** Text citations: the part's own, or the AI SDK's form (`providerOptions.anthropic.citations`). */
const citationsOut = (
  index: number,
  path: string,
  part: Message.TextPart,
  options: JsonRecord
): Either.Either<ReadonlyArray<Json> | undefined, AdapterError> => {
  if (part.citations !== undefined && part.citations.length > 0) return Either.right(part.citations)
  const given = options.citations
  if (given === undefined) return Either.right(undefined)
  return Array.isArray(given) && given.every((citation) => isRecord(citation) && typeof citation.type === "string")
    ? Either.right(given)
    : Either.left(
        refuse(
          format,
          index,
          `${path}.providerOptions.anthropic.citations`,
          "citations are not a list of typed objects"
        )
      )
}

const textOut = (index: number, path: string, part: Message.TextPart): Either.Either<Block, AdapterError> =>
  Either.flatMap(anthropicOptions(index, path, "text", part.providerOptions), (options) => {
    if (options.type === "compaction")
      return Either.right(cached({ type: "compaction", content: part.text }, cacheOf(options)))
    if (options.type !== undefined) {
      return Either.left(
        refuse(format, index, `${path}.providerOptions.anthropic.type`, `no text block of type ${String(options.type)}`)
      )
    }
    return Either.map(citationsOut(index, path, part, options), (citations) =>
      cached(
        citations === undefined ? { type: "text", text: part.text } : { type: "text", text: part.text, citations },
        cacheOf(options)
      )
    )
  })

const mediaOut = (
  index: number,
  path: string,
  part: Message.ImagePart | Message.DocumentPart
): Either.Either<Block, AdapterError> =>
  Either.flatMap(anthropicOptions(index, path, part.type, part.providerOptions), (options) =>
    Either.mapBoth(mediaBlock(part), {
      onLeft: (detail) => refuse(format, index, path, detail),
      onRight: (block): Block => {
        if (block.type !== "document") return cached({ ...block }, cacheOf(options))
        const title = typeof options.title === "string" ? { title: options.title } : {}
        const context = options.context === undefined ? {} : { context: options.context }
        const citations = options.citations === undefined ? {} : { citations: options.citations }
        return cached({ ...block, ...title, ...context, ...citations }, cacheOf(options))
      }
    })
  )

const toolResultOut = (index: number, path: string, part: Message.ToolResultPart): Either.Either<Block, AdapterError> =>
  Either.flatMap(anthropicOptions(index, path, "tool_result", part.providerOptions), (options) => {
    const content = Message.toolResultContentOf(part)
    const only = content[0]
    const blocks =
      content.length === 1 &&
      only?.type === "text" &&
      only.citations === undefined &&
      only.providerOptions?.anthropic === undefined
        ? Either.right<string | ReadonlyArray<Block>>(only.text)
        : convertAll(content, (inner, innerIndex) => {
            const where = `${path}.parts[${innerIndex}]`
            return Either.map(
              inner.type === "text" ? textOut(index, where, inner) : mediaOut(index, where, inner),
              (block) => [block]
            )
          })
    return Either.map(blocks, (value) =>
      cached(
        {
          type: "tool_result",
          tool_use_id: part.toolCallId,
          content: value,
          ...(part.isError ? { is_error: true } : {})
        },
        cacheOf(options)
      )
    )
  })

interface ServerCall {
  readonly name: string
  readonly mcp: boolean
}

const subtools = ["bash_code_execution", "text_editor_code_execution"]

/** A provider-executed call as the API's block: `server_tool_use`, or `mcp_tool_use` for an MCP call. */
const serverCallOut = (
  index: number,
  path: string,
  part: Message.ServerToolCallPart,
  calls: Map<string, ServerCall>
): Either.Either<Block, AdapterError> =>
  Either.flatMap(anthropicOptions(index, path, "server_tool_call", part.providerOptions), (options) =>
    Either.flatMap(callerOf(index, path, options), (caller): Either.Either<Block, AdapterError> => {
      const mcp = options.type === "mcp-tool-use"
      calls.set(part.id, { name: part.name, mcp })
      if (mcp) {
        return typeof options.serverName === "string"
          ? Either.right(
              cached(
                {
                  type: "mcp_tool_use",
                  id: part.id,
                  name: part.name,
                  input: part.input,
                  server_name: options.serverName
                },
                cacheOf(options)
              )
            )
          : Either.left(
              refuse(
                format,
                index,
                `${path}.providerOptions.anthropic.serverName`,
                "an MCP tool use needs its server name"
              )
            )
      }
      if (options.type !== undefined) {
        return Either.left(
          refuse(format, index, `${path}.providerOptions.anthropic.type`, `no tool use of type ${String(options.type)}`)
        )
      }
      // The AI SDK names code execution's sub-tools (and programmatic calls) by an input `type`.
      const input = part.input
      const subtool = part.name === "code_execution" && isRecord(input) ? input.type : undefined
      const name = typeof subtool === "string" && subtools.includes(subtool) ? subtool : part.name
      const sent =
        (typeof subtool === "string" && subtools.includes(subtool)) || subtool === "programmatic-tool-call"
          ? Object.fromEntries(Object.entries(input as JsonRecord).filter(([key]) => key !== "type"))
          : input
      return Either.right(
        cached(withCaller({ type: "server_tool_use", id: part.id, name, input: sent }, caller), cacheOf(options))
      )
    })
  )

/** An error code from a provider tool's error output (JSON text or an object), as `@ai-sdk/anthropic` reads it. */
const errorCode = (value: Json | undefined): string => {
  let parsed: unknown = value
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value)
    } catch {
      return "unavailable"
    }
  }
  return isRecord(parsed) && typeof parsed.errorCode === "string" ? parsed.errorCode : "unavailable"
}

/**
 * The content of the API block answering a provider-executed call, from the AI SDK's tool output
 * (`{ type: "json" | "error-json" | ..., value }`, camelCase fields) — the conversion `@ai-sdk/anthropic`
 * makes — or the reason there is none.
 */
const aiSdkResultBlock = (
  call: ServerCall,
  output: Json
): Either.Either<{ type: string; content: unknown; isError?: boolean }, string> => {
  if (!isRecord(output) || typeof output.type !== "string")
    return Either.left("a provider tool output is not { type, value }")
  const kind = output.type
  const value = output.value
  const error = kind === "error-json" || kind === "error-text"
  const unsupported = Either.left(`a ${kind} output of provider tool ${call.name} has no Anthropic block`)
  if (call.mcp) {
    return kind === "json" || kind === "error-json"
      ? Either.right({ type: "mcp_tool_result", content: value, isError: kind === "error-json" })
      : unsupported
  }
  switch (call.name) {
    case "web_search":
      if (kind === "error-json") {
        return Either.right({
          type: "web_search_tool_result",
          content: { type: "web_search_tool_result_error", error_code: errorCode(value) }
        })
      }
      if (kind !== "json" || !Array.isArray(value) || !value.every(isRecord)) return unsupported
      return Either.right({
        type: "web_search_tool_result",
        content: value.map((result) => ({
          url: result.url,
          title: result.title,
          page_age: result.pageAge,
          encrypted_content: result.encryptedContent,
          type: result.type
        }))
      })
    case "web_fetch": {
      if (kind === "error-json") {
        return Either.right({
          type: "web_fetch_tool_result",
          content: { type: "web_fetch_tool_result_error", error_code: errorCode(value) }
        })
      }
      const document = isRecord(value) ? value.content : undefined
      const source = isRecord(document) ? document.source : undefined
      if (kind !== "json" || !isRecord(value) || !isRecord(document) || !isRecord(source)) return unsupported
      return Either.right({
        type: "web_fetch_tool_result",
        content: {
          type: "web_fetch_result",
          url: value.url,
          retrieved_at: value.retrievedAt,
          content: {
            type: "document",
            title: document.title,
            citations: document.citations,
            source: { type: source.type, media_type: source.mediaType, data: source.data }
          }
        }
      })
    }
    case "code_execution": {
      if (error) {
        let info: unknown = value
        if (typeof value === "string") {
          try {
            info = JSON.parse(value)
          } catch {
            info = {}
          }
        }
        const code = isRecord(info) && typeof info.errorCode === "string" ? info.errorCode : "unknown"
        return isRecord(info) && info.type === "code_execution_tool_result_error"
          ? Either.right({
              type: "code_execution_tool_result",
              content: { type: "code_execution_tool_result_error", error_code: code }
            })
          : Either.right({
              type: "bash_code_execution_tool_result",
              content: { type: "bash_code_execution_tool_result_error", error_code: code }
            })
      }
      if (kind !== "json" || !isRecord(value) || typeof value.type !== "string") return unsupported
      switch (value.type) {
        case "code_execution_result":
          return Either.right({
            type: "code_execution_tool_result",
            content: {
              type: value.type,
              stdout: value.stdout,
              stderr: value.stderr,
              return_code: value.return_code,
              content: value.content ?? []
            }
          })
        case "encrypted_code_execution_result":
          return Either.right({
            type: "code_execution_tool_result",
            content: {
              type: value.type,
              encrypted_stdout: value.encrypted_stdout,
              stderr: value.stderr,
              return_code: value.return_code,
              content: value.content ?? []
            }
          })
        case "bash_code_execution_result":
          return Either.right({
            type: "bash_code_execution_tool_result",
            content: {
              type: value.type,
              stdout: value.stdout,
              stderr: value.stderr,
              return_code: value.return_code,
              content: value.content
            }
          })
        case "bash_code_execution_tool_result_error":
          return Either.right({ type: "bash_code_execution_tool_result", content: value })
        default:
          return Either.right({ type: "text_editor_code_execution_tool_result", content: value })
      }
    }
    case "tool_search_tool_regex":
    case "tool_search_tool_bm25":
      if (kind !== "json" || !Array.isArray(value) || !value.every(isRecord)) return unsupported
      return Either.right({
        type: "tool_search_tool_result",
        content: {
          type: "tool_search_tool_search_result",
          tool_references: value.map((reference) => ({ type: "tool_reference", tool_name: reference.toolName }))
        }
      })
    case "advisor": {
      if ((kind !== "json" && kind !== "error-json") || !isRecord(value)) return unsupported
      const content =
        value.type === "advisor_result"
          ? { type: "advisor_result", text: value.text }
          : value.type === "advisor_redacted_result"
            ? { type: "advisor_redacted_result", encrypted_content: value.encryptedContent }
            : { type: "advisor_tool_result_error", error_code: value.errorCode }
      return Either.right({ type: "advisor_tool_result", content })
    }
    default:
      return Either.left(`provider tool ${call.name} has no Anthropic result block`)
  }
}

/** A provider-executed result as the API's block: as given (an Anthropic block type), or from the AI SDK's output. */
const serverResultOut = (
  index: number,
  path: string,
  part: Message.ServerToolResultPart,
  calls: ReadonlyMap<string, ServerCall>
): Either.Either<Block, AdapterError> =>
  Either.flatMap(anthropicOptions(index, path, "server_tool_result", part.providerOptions), (options) =>
    Either.flatMap(callerOf(index, path, options), (caller): Either.Either<Block, AdapterError> => {
      const finish = (block: Block) => Either.right(cached(withCaller(block, caller), cacheOf(options)))
      if (part.resultType.endsWith("_tool_result") && part.resultType !== "tool_result") {
        if (part.isError !== undefined && part.resultType !== "mcp_tool_result") {
          return Either.left(refuse(format, index, path, `a ${part.resultType} block has no error flag`))
        }
        return finish({
          type: part.resultType,
          tool_use_id: part.toolCallId,
          content: part.content,
          ...(part.isError === undefined ? {} : { is_error: part.isError })
        })
      }
      const call = calls.get(part.toolCallId)
      if (part.resultType !== "tool-result" || call === undefined) {
        return Either.left(
          refuse(
            format,
            index,
            path,
            `server tool result type ${part.resultType} is not an Anthropic block (or has no call before it)`
          )
        )
      }
      return Either.match(aiSdkResultBlock(call, part.content), {
        onLeft: (detail) => Either.left(refuse(format, index, path, detail)),
        onRight: ({ type, content, isError }) =>
          finish({
            type,
            tool_use_id: part.toolCallId,
            ...(isError === undefined ? {} : { is_error: isError }),
            content
          })
      })
    })
  )

interface Placed {
  readonly block: Block
  readonly path: string
}

const partBlocks = (
  index: number,
  message: AnyMessage,
  sendReasoning: boolean,
  calls: Map<string, ServerCall>
): Either.Either<ReadonlyArray<Placed>, AdapterError> =>
  convertAll(message.parts, (part, partIndex): Either.Either<ReadonlyArray<Placed>, AdapterError> => {
    const path = `parts[${partIndex}]`
    const placed = (converted: Either.Either<Block, AdapterError>) =>
      Either.map(converted, (block): ReadonlyArray<Placed> => [{ block, path }])
    switch (part.type) {
      case "text":
        return placed(textOut(index, path, part))
      case "tool_call":
        return Either.flatMap(anthropicOptions(index, path, "tool_call", part.providerOptions), (options) =>
          Either.flatMap(callerOf(index, path, options), (caller) =>
            placed(
              Either.right(
                cached(
                  withCaller({ type: "tool_use", id: part.id, name: part.name, input: part.input }, caller),
                  cacheOf(options)
                )
              )
            )
          )
        )
      case "reasoning":
        return Either.flatMap(anthropicOptions(index, path, "reasoning", part.providerOptions), (options) => {
          if (cacheOf(options) !== undefined) {
            return Either.left(
              refuse(format, index, path, "thinking takes no cache_control (it is cached with its turn)")
            )
          }
          if (!sendReasoning) return Either.right([])
          const redacted =
            part.redactedData ?? (typeof options.redactedData === "string" ? options.redactedData : undefined)
          const signature = part.signature ?? (typeof options.signature === "string" ? options.signature : undefined)
          if (redacted !== undefined) return placed(Either.right({ type: "redacted_thinking", data: redacted }))
          // Readable-only reasoning (no signature) is not sent: the API takes thinking only with its signature.
          return signature === undefined
            ? Either.right([])
            : placed(Either.right({ type: "thinking", thinking: part.text, signature }))
        })
      case "image":
      case "document":
        return placed(mediaOut(index, path, part))
      case "tool_result":
        return placed(toolResultOut(index, path, part))
      case "server_tool_call":
      case "server_tool_result":
        if (part.provider !== "anthropic") {
          return Either.left(
            refuse(format, index, path, `a ${part.type} part ran by ${part.provider} goes back only to it`)
          )
        }
        return placed(
          part.type === "server_tool_call"
            ? serverCallOut(index, path, part, calls)
            : serverResultOut(index, path, part, calls)
        )
      case "tool_approval_request":
      case "tool_approval_response":
        // Approvals steer the agent loop; the API has no form for them and is sent none.
        return Either.right([])
      case "custom":
        // An AI SDK provider's own content: only the AI SDK sends it back (its provider decides the form).
        return Either.right([])
    }
  })

const maxBreakpoints = 4

/** The cache breakpoints of a block (its own and its content's), by path. */
const breakpointsOf = ({ block, path }: Placed): ReadonlyArray<string> => {
  const inner = Array.isArray(block.content)
    ? (block.content as ReadonlyArray<unknown>).flatMap((item, itemIndex) =>
        isRecord(item) && item.cache_control !== undefined ? [`${path}.parts[${itemIndex}]`] : []
      )
    : []
  return [...inner, ...(block.cache_control === undefined ? [] : [path])]
}

/** Client tool uses go after the other blocks of their stretch (between thinking blocks), as the API wants. */
const toolUsesLast = (content: ReadonlyArray<Block>): Array<Block> => {
  const out: Array<Block> = []
  let stretch: Array<Block> = []
  const flush = () => {
    out.push(
      ...stretch.filter((block) => block.type !== "tool_use"),
      ...stretch.filter((block) => block.type === "tool_use")
    )
    stretch = []
  }
  for (const block of content) {
    if (block.type === "thinking" || block.type === "redacted_thinking") {
      flush()
      out.push(block)
    } else stretch.push(block)
  }
  flush()
  return out
}

/**
 * ctxlog messages (e.g. `[...window.system, ...window.history]`) as Anthropic `system` + `messages`,
 * or an `AdapterError` naming the part the API would refuse.
 *
 * The results of a tool round travel in one user message; other messages stay messages of their own
 * (the API joins consecutive turns of one role). Client `tool_use` blocks go last in their stretch of
 * an assistant message (between thinking blocks), after server tool blocks; the final assistant text
 * loses its trailing whitespace (the API refuses it in a prefill). Cache hints
 * (`providerOptions.anthropic.cacheControl`) go on the block they sit on, a message's on its last
 * block; at most four. See the module's documentation for the rest.
 * @since 0.1.0
 */
export const toAnthropic = (
  messages: ReadonlyArray<AnyMessage>,
  options: ToAnthropicOptions = {}
): Either.Either<AnthropicMessages, AdapterError> => {
  const sendReasoning = options.sendReasoning ?? true
  const names = toolNames(messages)
  const calls = new Map<string, ServerCall>()
  const system: Array<Block> = []
  const out: Array<{ role: "user" | "assistant"; content: Array<Block> }> = []
  let breakpoints = 0
  const count = (index: number, placed: ReadonlyArray<Placed>): AdapterError | undefined => {
    for (const path of placed.flatMap(breakpointsOf)) {
      breakpoints++
      if (breakpoints > maxBreakpoints) {
        return refuse(format, index, path, `a cache breakpoint beyond the API's ${maxBreakpoints}`)
      }
    }
    return undefined
  }
  for (const [index, message] of messages.entries()) {
    if (
      message.name !== undefined &&
      (message.role !== "tool" ||
        Message.toolResultsOf(message).some((result) => names.get(result.toolCallId) !== message.name))
    ) {
      return Either.left(refuse(format, index, "name", `Anthropic messages have no name field (${message.name})`))
    }
    const own = anthropicOptions(index, "", "message", message.providerOptions)
    if (Either.isLeft(own)) return Either.left(own.left)
    const hint = cacheOf(own.right)
    if (message.role === "system") {
      // One text block per system message: its parts must be plain text (a hint on one marks the block).
      let partHint: Json | undefined
      for (const [partIndex, part] of message.parts.entries()) {
        const path = `parts[${partIndex}]`
        if (part.type !== "text" || (part.citations !== undefined && part.citations.length > 0)) {
          const what = part.type === "text" ? "text with citations" : `a ${part.type} part`
          return Either.left(refuse(format, index, path, `a system block takes plain text, not ${what}`))
        }
        const options = anthropicOptions(index, path, "text", part.providerOptions)
        if (Either.isLeft(options)) return Either.left(options.left)
        if (options.right.citations !== undefined || options.right.type !== undefined) {
          return Either.left(
            refuse(format, index, `${path}.providerOptions.anthropic`, "a system block takes plain text")
          )
        }
        partHint = cacheOf(options.right) ?? partHint
      }
      const placed: Placed = {
        block: cached({ type: "text", text: Message.textOf(message) }, hint ?? partHint),
        path: "parts"
      }
      const error = count(index, [placed])
      if (error !== undefined) return Either.left(error)
      system.push(placed.block)
      continue
    }
    const converted = partBlocks(index, message, sendReasoning, calls)
    if (Either.isLeft(converted)) return Either.left(converted.left)
    const placed = [...converted.right]
    const last = placed[placed.length - 1]
    if (hint !== undefined && hint !== null) {
      if (last === undefined) {
        return Either.left(
          refuse(
            format,
            index,
            "providerOptions.anthropic.cacheControl",
            "a cache hint on a message that sends no block"
          )
        )
      }
      if (last.block.cache_control === undefined)
        placed[placed.length - 1] = { ...last, block: cached(last.block, hint) }
    }
    const error = count(index, placed)
    if (error !== undefined) return Either.left(error)
    if (placed.length === 0) continue
    const role = message.role === "assistant" ? "assistant" : "user"
    const previous = out[out.length - 1]
    const blocks = placed.map((entry) => entry.block)
    // The results of a round travel together, in the user message after the calls; other messages
    // stay messages of their own (the API joins consecutive turns of one role itself).
    const joins =
      message.role === "tool" &&
      previous?.role === "user" &&
      previous.content[previous.content.length - 1]?.type === "tool_result"
    if (joins) previous.content.push(...blocks)
    else out.push({ role, content: blocks })
  }
  const sent = out.map(({ role, content }) => ({
    role,
    content: role === "assistant" ? toolUsesLast(content) : content
  }))
  const final = sent[sent.length - 1]
  const tail = final?.content[final.content.length - 1]
  if (final?.role === "assistant" && tail?.type === "text" && typeof tail.text === "string") {
    final.content[final.content.length - 1] = { ...tail, text: tail.text.trimEnd() }
  }
  return Either.right({
    system: system as unknown as Array<TextBlockParam>,
    messages: sent as unknown as Array<MessageParam>
  })
}

// --- Anthropic → ctxlog -----------------------------------------------------------------------------

/** The fields each block type has that `fromAnthropic` models or keeps; any other is refused by name. */
const blockFields: { readonly [type: string]: ReadonlyArray<string> } = {
  text: ["type", "text", "citations", "cache_control"],
  thinking: ["type", "thinking", "signature"],
  redacted_thinking: ["type", "data"],
  image: ["type", "source", "cache_control"],
  document: ["type", "source", "title", "context", "citations", "cache_control"],
  tool_use: ["type", "id", "name", "input", "cache_control", "caller"],
  server_tool_use: ["type", "id", "name", "input", "cache_control", "caller"],
  mcp_tool_use: ["type", "id", "name", "input", "server_name", "cache_control"],
  tool_result: ["type", "tool_use_id", "content", "is_error", "cache_control"],
  server_tool_result: ["type", "tool_use_id", "content", "cache_control", "caller", "is_error"],
  compaction: ["type", "content", "cache_control"]
}

/**
 * The request fields of a block that are not message content, kept as the part's
 * `providerOptions.anthropic` in the AI SDK's names (`cacheControl`, a document's `context` and
 * `citations` settings, a tool use's `caller`), so `toAnthropic` gives them back in place. A field
 * neither modelled nor kept is an AdapterError naming it.
 */
const keptOf = (
  index: number,
  path: string,
  block: object,
  fields: ReadonlyArray<string>,
  extra: JsonRecord = {}
): Either.Either<{ readonly providerOptions?: Message.ProviderOptions }, AdapterError> => {
  const record = block as { readonly [key: string]: unknown }
  const unknown = Object.keys(record).find((key) => !fields.includes(key) && record[key] !== undefined)
  if (unknown !== undefined)
    return Either.left(refuse(format, index, `${path}.${unknown}`, "a block field ctxlog does not keep"))
  const kept: { [key: string]: Json } = { ...extra }
  const put = (key: string, value: unknown) => {
    if (value === undefined || value === null) return true
    if (!isJson(value)) return false
    kept[key] = value
    return true
  }
  const caller = record.caller
  const callerKept =
    isRecord(caller) && typeof caller.tool_id === "string"
      ? { type: caller.type ?? null, toolId: caller.tool_id }
      : caller
  const ok =
    put("cacheControl", record.cache_control) &&
    (record.type !== "document" || (put("context", record.context) && put("citations", record.citations))) &&
    put("caller", callerKept)
  if (!ok) return Either.left(refuse(format, index, path, "a request field is not JSON"))
  return Either.right(Object.keys(kept).length === 0 ? {} : { providerOptions: { anthropic: kept } })
}

const withKept = <P extends Message.Part>(
  index: number,
  path: string,
  block: object,
  fields: ReadonlyArray<string>,
  part: P,
  extra?: JsonRecord
): Either.Either<P, AdapterError> =>
  Either.map(keptOf(index, path, block, fields, extra), (kept) => ({ ...part, ...kept }))

const citationsOf = (
  index: number,
  path: string,
  block: TextBlockParam
): Either.Either<ReadonlyArray<Message.Citation> | undefined, AdapterError> => {
  const citations: ReadonlyArray<unknown> | null | undefined = block.citations
  if (citations === undefined || citations === null || citations.length === 0) return Either.right(undefined)
  return citations.every(
    (citation): citation is Message.Citation =>
      isJson(citation) && typeof citation === "object" && citation !== null && "type" in citation
  )
    ? Either.right(citations)
    : Either.left(refuse(format, index, path, "a citation is not JSON with a type"))
}

const textPart = (index: number, path: string, block: TextBlockParam): Either.Either<Message.TextPart, AdapterError> =>
  Either.flatMap(citationsOf(index, path, block), (citations) =>
    withKept(
      index,
      path,
      block,
      blockFields.text ?? [],
      citations === undefined ? Message.text(block.text) : { ...Message.text(block.text), citations }
    )
  )

const encodeText = (text: string): string => {
  const bytes = new TextEncoder().encode(text)
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

const mediaPart = (
  index: number,
  path: string,
  block: ImageBlockParam | DocumentBlockParam
): Either.Either<Message.ImagePart | Message.DocumentPart, AdapterError> => {
  const fields = blockFields[block.type] ?? []
  if (block.type === "image") {
    const source = block.source
    if (source.type === "base64")
      return withKept(index, path, block, fields, Message.imageBase64(source.media_type, source.data))
    if (source.type === "url") return withKept(index, path, block, fields, Message.imageUrl(source.url))
    return Either.left(refuse(format, index, path, `unsupported image source ${source.type}`))
  }
  const extra = block.title === undefined || block.title === null ? {} : { title: block.title }
  const source = block.source
  switch (source.type) {
    case "base64":
      return withKept(index, path, block, fields, Message.documentBase64(source.media_type, source.data, extra))
    case "text":
      return withKept(index, path, block, fields, Message.documentBase64("text/plain", encodeText(source.data), extra))
    case "url":
      return withKept(index, path, block, fields, Message.documentUrl(source.url, extra))
    default:
      return Either.left(refuse(format, index, path, `unsupported document source ${source.type}`))
  }
}

const resultPart = (
  index: number,
  path: string,
  block: ToolResultBlockParam
): Either.Either<Message.ToolResultPart, AdapterError> => {
  const isError = block.is_error === true
  const fields = blockFields.tool_result ?? []
  if (block.content === undefined)
    return withKept(index, path, block, fields, Message.toolResult(block.tool_use_id, "", isError))
  if (typeof block.content === "string")
    return withKept(index, path, block, fields, Message.toolResult(block.tool_use_id, block.content, isError))
  return Either.flatMap(
    convertAll(
      block.content,
      (inner, innerIndex): Either.Either<ReadonlyArray<Message.ToolResultContent>, AdapterError> => {
        const where = `${path}.content[${innerIndex}]`
        if (inner.type === "text") return Either.map(textPart(index, where, inner), (part) => [part])
        if (inner.type === "image" || inner.type === "document") {
          return Either.map(mediaPart(index, where, inner), (part) => [part])
        }
        return Either.left(refuse(format, index, where, `unsupported tool result block ${inner.type}`))
      }
    ),
    (parts) => withKept(index, path, block, fields, Message.toolResultParts(block.tool_use_id, parts, isError))
  )
}

type AnyBlock = { readonly type: string; readonly [key: string]: unknown }

/** An assistant block as a part: text, thinking, tool uses (client, server, MCP), server results, compaction. */
const assistantPart = (index: number, path: string, block: AnyBlock): Either.Either<Message.Part, AdapterError> => {
  const fields = blockFields[block.type] ?? []
  switch (block.type) {
    case "text":
      return textPart(index, path, block as unknown as TextBlockParam)
    case "thinking":
      return withKept(
        index,
        path,
        block,
        fields,
        Message.reasoning(String(block.thinking), { signature: String(block.signature) })
      )
    case "redacted_thinking":
      return withKept(index, path, block, fields, Message.reasoning("", { redactedData: String(block.data) }))
    case "compaction":
      return withKept(index, path, block, fields, Message.text(String(block.content)), { type: "compaction" })
    case "tool_use":
    case "server_tool_use":
    case "mcp_tool_use":
      return Either.flatMap(
        jsonInput(format, index, block.input),
        (input): Either.Either<Message.Part, AdapterError> => {
          const id = String(block.id)
          const name = String(block.name)
          if (block.type === "tool_use") return withKept(index, path, block, fields, Message.toolCall(id, name, input))
          const extra: JsonRecord =
            block.type === "mcp_tool_use" ? { type: "mcp-tool-use", serverName: String(block.server_name) } : {}
          return withKept(index, path, block, fields, Message.serverToolCall("anthropic", id, name, input), extra)
        }
      )
  }
  if (block.type !== "tool_result" && block.type.endsWith("_tool_result") && "tool_use_id" in block) {
    const content: unknown = block.content
    if (!isJson(content)) return Either.left(refuse(format, index, path, "server tool result content is not JSON"))
    const part = Message.serverToolResult("anthropic", String(block.tool_use_id), block.type, content)
    const flagged = typeof block.is_error === "boolean" ? { ...part, isError: block.is_error } : part
    return withKept(index, path, block, blockFields.server_tool_result ?? [], flagged)
  }
  return Either.left(refuse(format, index, path, `unsupported assistant block ${block.type}`))
}

/**
 * Anthropic `messages` (and optional `system`) as ctxlog message inputs. Request fields that are not
 * content are kept, not dropped (since 0.8.0): `cache_control` on any block (a system block's on its
 * message), a document's `context` and `citations` settings and a tool use's `caller`, as
 * `providerOptions.anthropic` in the AI SDK's names; `toAnthropic` gives them back in place. A field
 * or block it does not know is an `AdapterError` naming it (one in a `system` block has index -1 and
 * the path `system[i]`).
 * @since 0.1.0
 */
export const fromAnthropic = (
  messages: ReadonlyArray<MessageParam>,
  system?: string | ReadonlyArray<TextBlockParam>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
  const systemInputs = convertAll(
    typeof system === "string" ? [{ type: "text" as const, text: system }] : (system ?? []),
    (block, blockIndex): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
      Either.flatMap(textPart(-1, `system[${blockIndex}]`, block), ({ providerOptions, ...part }) =>
        part.citations === undefined
          ? Either.right([
              { ...Message.system(part.text), ...(providerOptions === undefined ? {} : { providerOptions }) }
            ])
          : Either.left(refuse(format, -1, `system[${blockIndex}].citations`, "a system message keeps no citations"))
      )
  )
  if (Either.isLeft(systemInputs)) return Either.left(systemInputs.left)
  return Either.map(
    convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
      const unknown = Object.keys(message).find((key) => key !== "role" && key !== "content")
      if (unknown !== undefined)
        return Either.left(refuse(format, index, unknown, "a message field ctxlog does not keep"))
      if (typeof message.content === "string") {
        return Either.right([{ role: message.role, parts: [Message.text(message.content)] }])
      }
      const results: Array<Message.ToolResultPart> = []
      const own: Array<Message.Part> = []
      for (const [blockIndex, block] of message.content.entries()) {
        const path = `content[${blockIndex}]`
        let converted: Either.Either<Message.Part, AdapterError>
        if (block.type === "tool_result" && message.role === "user") {
          const result = resultPart(index, path, block)
          if (Either.isLeft(result)) return Either.left(result.left)
          results.push(result.right)
          continue
        }
        if (block.type === "image" || block.type === "document") converted = mediaPart(index, path, block)
        else if (block.type === "text") converted = textPart(index, path, block)
        else if (message.role === "assistant") converted = assistantPart(index, path, block as unknown as AnyBlock)
        else converted = Either.left(refuse(format, index, path, `unsupported ${message.role} block ${block.type}`))
        if (Either.isLeft(converted)) return Either.left(converted.left)
        own.push(converted.right)
      }
      const inputs: ReadonlyArray<Message.MessageInput> = results.map((result) => ({ role: "tool", parts: [result] }))
      // Tool results answer the previous assistant turn, so they come before any new user text.
      return Either.right(own.length === 0 ? inputs : [...inputs, { role: message.role, parts: own }])
    }),
    (converted) => [...systemInputs.right, ...converted]
  )
}
