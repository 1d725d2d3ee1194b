/**
 * The prompt-cache model: from a stream's renders and their timestamps alone it predicts, per model
 * call, the uncached / cache-write / cache-read input tokens and what they cost ({@link CacheTable}),
 * sets each prediction beside the usage the provider reported where there is one, and says why a call
 * missed the cache: the longest prefix it shared with the previous render of the same provider and
 * model, the first request block and window message where it diverged, and the events between the two
 * renders responsible (trim, compaction, seam, injection, signal, system or tool change, pruning, model
 * switch, TTL expiry, prefix below the minimum).
 *
 * How a request is cut: into blocks in the provider's cache order — Anthropic: tools, system blocks,
 * then each message's content blocks (a `cache_control` on a block is a breakpoint with its TTL);
 * elsewhere: tools, `instructions`, then each message (or Responses input item). Each block's tokens
 * are counted once with o200k (the local counter every package uses); a prefix is the chain hash of
 * its blocks, so two renders share a cache entry exactly when their bytes agree up to it. A Responses
 * input item is counted as the server reads it (ADR 0141): its strings (not the JSON that escapes them
 * again) plus its framing (3 for a message, the table's `itemFramingTokens` for a reasoning item, a
 * function call or its output; ADR 0172); an encrypted reasoning item by its
 * ciphertext's size (the table's `encryptedReasoning`); reasoning before the last user message as
 * nothing (the server drops earlier turns' reasoning, cause `reasoning-dropped`); and the previous
 * call's output items, which follow its prompt, are read back with it (the server caches what it
 * generated).
 *
 * What the prediction reads: the renders (rebuilt from the log), the events' `recordedAt`, and the
 * usage of the stream's first call only, to estimate an *unknown prefix* — the system prompt and tool
 * definitions an imported session does not hold — as recorded input minus counted render. No later
 * call's usage is read.
 *
 * @since 0.5.0
 */
import { Caches, EventHash, Message, TokenCounter, Window, type WindowEvent } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as CacheTable from "./CacheTable.js"
import * as RenderRecord from "./RenderRecord.js"

/** A stream event with its place and time (an inspector entry has this shape). @since 0.5.0 */
export interface TimedEvent {
  readonly version: number
  /** Epoch milliseconds: the time of the call for a `PromptRendered`. */
  readonly recordedAt: number
  readonly event: WindowEvent.WindowEvent
}

/** Input tokens of one call, split the way providers bill them. @since 0.5.0 */
export interface Split {
  readonly promptTokens: number
  readonly uncached: number
  readonly cacheWrite: number
  /** The 1-hour part of `cacheWrite`. */
  readonly cacheWrite1h: number
  readonly cacheRead: number
  /** USD. */
  readonly cost: number
  readonly class: CacheClass
}

/**
 * `miss`: more than half the prompt was not read from the cache (written, or sent uncached);
 * `hit`: at most a tenth was not; `partial` between.
 * @since 0.5.0
 */
export type CacheClass = "hit" | "partial" | "miss"

/** What broke a cached prefix. @since 0.5.0 */
export type CauseKind =
  | "cold-start"
  | "model-switch"
  | "ttl-expiry"
  | "below-minimum"
  | "trim"
  | "compaction"
  | "seam"
  | "injection"
  | "signal"
  | "task-state"
  | "turn-reminder"
  | "system-change"
  | "tool-change"
  | "pruning"
  | "removal"
  | "reset"
  | "lookback"
  | "new-content"
  | "no-cache"
  | "edit"
  | "reasoning-dropped"

/** Why one call did not read more from the cache. @since 0.5.0 */
export interface Cause {
  readonly kind: CauseKind
  readonly detail: string
  /** Tokens of the longest prefix shared with the previous render of the same provider and model. */
  readonly sharedTokens: number
  /** The first request block that differs (`messages[5].content[1]`, `system[0]`, `tools[3]`). */
  readonly divergedAt: string | null
  /** The first window message that differs, in render order. */
  readonly message: { readonly index: number; readonly id: string; readonly preview: string } | null
  /** The events between the two renders held responsible. */
  readonly events: ReadonlyArray<{ readonly version: number; readonly type: string }>
  /** USD the break cost this call: what the previous cached prefix would have been read for, less what was. */
  readonly lost: number
}

/** One model call: the prediction, the recording, and why it missed. @since 0.5.0 */
export interface Call {
  readonly version: number
  readonly at: number
  readonly provider: string
  readonly model: string
  readonly predicted: Split
  readonly recorded: Split | null
  /** Predicted minus recorded cache-read tokens, over the recorded ones (null without a recording). */
  readonly readError: number | null
  readonly cause: Cause | null
  /** False when the render could not be rebuilt: one block of its recorded size, no partial prefix. */
  readonly rebuilt: boolean
}

/** The unknown prefix of a stream whose renders lack the system prompt and tools. @since 0.5.0 */
export interface UnknownPrefix {
  readonly tokens: number
  /**
   * The part of it the first call already read from the cache (the tool's own system prompt and tools,
   * which its other sessions keep cached): taken as cached for the whole stream.
   */
  readonly warmTokens: number
  readonly note: string
}

/** A stream's calls, the causes ranked by dollars lost, and the totals. @since 0.5.0 */
export interface Report {
  readonly table: string
  readonly unknownPrefix: UnknownPrefix | null
  readonly calls: ReadonlyArray<Call>
  readonly causes: ReadonlyArray<{ readonly kind: CauseKind; readonly calls: number; readonly lost: number }>
  readonly totals: {
    readonly predicted: Omit<Split, "class">
    readonly recorded: Omit<Split, "class"> | null
  }
}

/** Options of {@link predict}. @since 0.5.0 */
export interface Options {
  /** `auto` (default): estimated from the first call's recorded usage; a number: that many tokens. */
  readonly unknownPrefix?: "auto" | number | UnknownPrefix
  /** Overrides the table's input and read prices for every model. */
  readonly pricing?: { readonly input: number; readonly cacheRead: number } | undefined
  readonly table?: CacheTable.Table
  /**
   * The render at a version already rebuilt (`RenderRecord.rebuild` of the same events), when the
   * caller has it: a sweep rebuilds each render once for its own checks and hands it here.
   * @since 0.8.0
   */
  readonly rebuilt?: (version: number) => Either.Either<RenderRecord.Rebuilt, RenderRecord.RenderMismatch> | undefined
  /**
   * The hash that chains a render's blocks into prefix keys (default `EventHash.sha256`). A prediction
   * hashes each (prefix, block) pair once, however many calls repeat it; a test counts the calls.
   * @since 0.8.0
   */
  readonly hash?: ((text: string) => string) | undefined
  /**
   * The window just before the event at a version (what the events before it fold to), when the caller
   * already folded them: a sweep's trace folds each run once and hands its windows here, so a
   * prediction folds no event again. A render whose window this does not give is folded to from the
   * last window known.
   * @since 0.8.0
   */
  readonly windowAt?: ((version: number) => Window.Window | undefined) | undefined
}

// ---------------------------------------------------------------------------------------------------
// Blocks

interface Block {
  readonly label: string
  /** Chain hash of every block up to and including this one. */
  readonly key: string
  /** Cumulative tokens through this block. */
  readonly end: number
  /** A breakpoint's TTL (Anthropic `cache_control`). */
  readonly ttl?: "5m" | "1h"
  /** The model's own output (a Responses reasoning, function call or assistant message item). */
  readonly output?: boolean
  /** Reasoning of an earlier turn, which the server drops (OpenAI Responses). */
  readonly dropped?: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const arrayAt = (value: unknown, key: string): ReadonlyArray<unknown> => {
  if (!isRecord(value)) return []
  const found = value[key]
  return Array.isArray(found) ? found : []
}

const ttlOf = (block: unknown): "5m" | "1h" | undefined => {
  if (!isRecord(block) || !isRecord(block.cache_control)) return undefined
  return block.cache_control.ttl === "1h" ? "1h" : "5m"
}

const withoutControl = (block: unknown): unknown => {
  if (!isRecord(block) || !("cache_control" in block)) return block
  const { cache_control: _dropped, ...rest } = block
  return rest
}

interface RawBlock {
  readonly label: string
  /** What the prefix key hashes: the block's bytes as sent. */
  readonly text: string
  readonly ttl?: "5m" | "1h" | undefined
  /** What the model reads of it, when not `text` (a Responses item's strings without their JSON). */
  readonly counted?: string
  /** Tokens the model reads that no text shows (an encrypted reasoning item's), not scaled. */
  readonly hidden?: number
  /** The model's own output (a Responses reasoning, function call or assistant message item). */
  readonly output?: boolean
  /** Reasoning of an earlier turn, which the server drops (OpenAI Responses). */
  readonly dropped?: boolean
}

const isOutputItem = (item: unknown): boolean =>
  isRecord(item) &&
  (item.type === "reasoning" || item.type === "function_call" || (item.type === "message" && item.role === "assistant"))

/**
 * What the model reads of a Responses input item: its strings as the server unwraps them, not the JSON
 * that carries them (JSON escapes a tool output's quotes and newlines again, and the envelope's keys and
 * `call_id` are not part of the prompt). A reasoning item reads its summary here; its encrypted reasoning
 * is {@link hiddenTokens}.
 */
const responsesText = (item: unknown): string | undefined => {
  if (!isRecord(item)) return undefined
  const textOf = (content: unknown): string =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content
            .map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : JSON.stringify(part)))
            .join("\n")
        : ""
  switch (item.type) {
    case "message":
      return `${typeof item.role === "string" ? item.role : ""}\n${textOf(item.content)}`
    case "function_call":
      return `${typeof item.name === "string" ? item.name : ""}\n${typeof item.arguments === "string" ? item.arguments : ""}`
    case "function_call_output":
      return textOf(item.output)
    case "reasoning":
      return textOf(item.summary)
    default:
      return undefined
  }
}

/**
 * Tokens of the reasoning an OpenAI `encrypted_content` carries (the model reads the reasoning, not the
 * ciphertext): the Fernet token's ciphertext bytes (base64url length × 3/4) past the table's fixed
 * overhead, at the table's bytes per token ({@link CacheTable.EncryptedReasoning}). 0 without the table
 * row or the field.
 */
const hiddenTokens = (item: unknown, rate: CacheTable.EncryptedReasoning | undefined): number => {
  if (rate === undefined || !isRecord(item) || item.type !== "reasoning") return 0
  const encrypted = item.encrypted_content
  if (typeof encrypted !== "string") return 0
  const bytes = Math.floor((encrypted.replace(/=+$/, "").length * 3) / 4)
  return Math.max(0, Math.round((bytes - rate.overheadBytes) / rate.bytesPerToken))
}

/** A request's blocks in its provider's cache order. */
const rawBlocks = (
  family: string,
  request: unknown,
  json: (value: unknown) => string = JSON.stringify,
  reasoning?: CacheTable.EncryptedReasoning,
  itemFraming = 3
): ReadonlyArray<RawBlock> => {
  const out: Array<RawBlock> = []
  arrayAt(request, "tools").forEach((tool, index) => {
    out.push({ label: `tools[${index}]`, text: json(withoutControl(tool)), ttl: ttlOf(tool) })
  })
  if (family === "anthropic") {
    const system = isRecord(request) ? request.system : undefined
    if (typeof system === "string") out.push({ label: "system", text: system })
    arrayAt(request, "system").forEach((block, index) => {
      out.push({ label: `system[${index}]`, text: json(withoutControl(block)), ttl: ttlOf(block) })
    })
    arrayAt(request, "messages").forEach((message, index) => {
      const role = isRecord(message) && typeof message.role === "string" ? message.role : "?"
      const content = isRecord(message) ? message.content : undefined
      if (typeof content === "string") {
        out.push({ label: `messages[${index}]`, text: `${role}:${content}` })
        return
      }
      arrayAt(message, "content").forEach((block, part) => {
        out.push({
          label: `messages[${index}].content[${part}]`,
          // The role opens its message: a block that moves to another role is another prefix.
          text: `${part === 0 ? `${role}:` : ""}${json(withoutControl(block))}`,
          ttl: ttlOf(block)
        })
      })
    })
    return out
  }
  const instructions = isRecord(request) ? request.instructions : undefined
  if (typeof instructions === "string") out.push({ label: "instructions", text: instructions })
  const items = arrayAt(request, "messages").length > 0 ? "messages" : "input"
  const list = arrayAt(request, items)
  // Reasoning from before the last user message is dropped by the server: the model reads the reasoning
  // of the current turn only (OpenAI's reasoning guide and its cookbook on reasoning items: "reasoning
  // tokens are discarded after each turn", kept within a turn's function calls). Such an item is then
  // another block than the same item kept, and reads as nothing.
  const lastUser =
    items === "input"
      ? list.findLastIndex((item) => isRecord(item) && item.type === "message" && item.role === "user")
      : -1
  list.forEach((item, index) => {
    const dropped = index < lastUser && isRecord(item) && item.type === "reasoning"
    if (dropped) {
      out.push({
        label: `${items}[${index}]`,
        text: `${json(item)}\u0000dropped`,
        counted: "",
        output: true,
        dropped: true
      })
      return
    }
    const text = json(item)
    const counted = items === "input" ? responsesText(item) : undefined
    // Each item is framed by tokens of the chat format: a message by 3 (OpenAI's token-counting cookbook),
    // the model's own items and tool outputs by the table's `itemFramingTokens` (ADR 0172).
    const framing = counted === undefined ? 0 : isRecord(item) && item.type === "message" ? 3 : itemFraming
    const hidden = items === "input" ? hiddenTokens(item, reasoning) + framing : 0
    out.push({
      label: `${items}[${index}]`,
      text,
      ...(counted === undefined ? {} : { counted }),
      ...(hidden > 0 ? { hidden } : {}),
      ...(items === "input" && isOutputItem(item) ? { output: true } : {})
    })
  })
  return out
}

// One tokenizer and one memo of block texts for every prediction in this thread: a sweep predicts each
// stream once per policy, over the same blocks (its pre-token memo stays warm across streams too).
// Both are caches of the cache layer (`Caches`): the counter keeps its own pre-token memo.
const blockMemo = Caches.lru<string, number>("providers.CacheModel.blockMemo", 20_000)
const blockCounter = Caches.slot<TokenCounter.TokenCounter.Service>("providers.CacheModel.blockCounter")
const gptCounter = () => TokenCounter.gpt("o200k_base")
const blockCount = TokenCounter.rememberTexts((text) => blockCounter.get(gptCounter).count(text), blockMemo)

const warmLabel = "unknown prefix (cached before the stream)"

/** The key of a block after the prefix `key`: `hash(key NUL text)`. */
type Link = (key: string, text: string) => string

/**
 * A {@link Link} that hashes each (prefix, text) pair once: consecutive renders share their prefix, so
 * a call hashes only the blocks after the first one that changed.
 */
const linker = (hash: (text: string) => string): Link => {
  const next = new Map<string, Map<string, string>>()
  return (key, text) => {
    let after = next.get(key)
    if (after === undefined) {
      after = new Map()
      next.set(key, after)
    }
    let linked = after.get(text)
    if (linked === undefined) {
      linked = hash(`${key}\u0000${text}`)
      after.set(text, linked)
    }
    return linked
  }
}

/**
 * `JSON.stringify` remembered per object: a builder's cached renders hand back the same message objects
 * for the unchanged part of the window, which a prediction serializes once.
 */
const jsonOnce = (): ((value: unknown) => string) => {
  const texts = new WeakMap<object, string>()
  return (value) => {
    if (typeof value !== "object" || value === null) return JSON.stringify(value)
    let text = texts.get(value)
    if (text === undefined) {
      text = JSON.stringify(value)
      texts.set(value, text)
    }
    return text
  }
}

const chainBlocks = (
  raws: ReadonlyArray<RawBlock>,
  count: (text: string) => number,
  link: Link,
  head?: { readonly tokens: number; readonly warm: number; readonly ttl: "5m" | "1h" | undefined }
): ReadonlyArray<Block> => {
  const blocks: Array<Block> = []
  let key = "cache-prefix"
  let end = 0
  if (head !== undefined && head.tokens > 0) {
    const ttl = head.ttl === undefined ? {} : { ttl: head.ttl }
    if (head.warm > 0) {
      key = link(key, warmLabel)
      end = head.warm
      blocks.push({ label: warmLabel, key, end, ...ttl })
    }
    if (head.tokens > head.warm) {
      key = link(key, "unknown-prefix")
      end = head.tokens
      blocks.push({ label: "unknown prefix", key, end, ...ttl })
    }
  }
  for (const raw of raws) {
    key = link(key, raw.text)
    end += count(raw.counted ?? raw.text) + (raw.hidden ?? 0)
    blocks.push({
      label: raw.label,
      key,
      end,
      ...(raw.ttl === undefined ? {} : { ttl: raw.ttl }),
      ...(raw.output === true ? { output: true } : {}),
      ...(raw.dropped === true ? { dropped: true } : {})
    })
  }
  return blocks
}

// ---------------------------------------------------------------------------------------------------
// Pricing and classes

const classOf = (promptTokens: number, cacheRead: number): CacheClass => {
  if (promptTokens <= 0) return "hit"
  const notRead = (promptTokens - cacheRead) / promptTokens
  return notRead > 0.5 ? "miss" : notRead <= 0.1 ? "hit" : "partial"
}

const costOf = (
  priced: CacheTable.Resolved,
  split: { uncached: number; cacheWrite: number; cacheWrite1h: number; cacheRead: number }
) =>
  (split.uncached * priced.input +
    (split.cacheWrite - split.cacheWrite1h) * priced.write5m +
    split.cacheWrite1h * priced.write1h +
    split.cacheRead * priced.cacheRead) /
  1_000_000

const splitOf = (
  priced: CacheTable.Resolved,
  promptTokens: number,
  cacheRead: number,
  cacheWrite: number,
  cacheWrite1h: number
): Split => {
  const parts = {
    uncached: Math.max(0, promptTokens - cacheRead - cacheWrite),
    cacheWrite,
    cacheWrite1h,
    cacheRead
  }
  return { promptTokens, ...parts, cost: costOf(priced, parts), class: classOf(promptTokens, cacheRead) }
}

/** Price a recorded `UsageReported` with the table. @since 0.5.0 */
export const priceUsage = (
  usage: Pick<
    WindowEvent.EventOf<"UsageReported">,
    "provider" | "model" | "inputTokens" | "cacheReadTokens" | "cacheWriteTokens" | "cacheWrite1hTokens"
  >,
  options: Pick<Options, "pricing" | "table"> = {}
): Split =>
  splitOf(
    CacheTable.resolve(usage.provider, usage.model, options.pricing, options.table),
    usage.inputTokens,
    usage.cacheReadTokens,
    usage.cacheWriteTokens,
    usage.cacheWrite1hTokens ?? 0
  )

// ---------------------------------------------------------------------------------------------------
// Causes

const kindOfEvent = (event: WindowEvent.WindowEvent): CauseKind | undefined => {
  switch (event._tag) {
    case "HistoryTrimmed":
    case "HistoryCleared":
      return "trim"
    case "Compacted":
    case "CompactionReverted":
    case "DeferredSummariesApplied":
      return "compaction"
    case "SeamProduced":
    case "SeamsRecompacted":
    case "BriefingProduced":
    case "CycleAdvanced":
    case "SeamsReset":
      return "seam"
    case "MessagesInjected":
    case "KnowledgeSet":
      return "injection"
    case "MessagesRemoved":
      return event.reason.startsWith("kind:") ? "injection" : "removal"
    case "ToolOutputPruned":
    case "MediaPruned":
    case "UserAskCut":
    case "UnseenCut":
      return "pruning"
    case "SystemPromptSet":
      return "system-change"
    case "SignalRaised":
      return "signal"
    case "TaskGoalSet":
    case "SubgoalsSet":
      return "task-state"
    case "ConversationReset":
    case "ConversationContinued":
      return "reset"
    default:
      return undefined
  }
}

/** A message's content signature, kept per message object (messages are immutable). */
const signatures = Caches.weak<Message.Message, string>("providers.CacheModel.signatures")
const signatureOf = (message: Message.Message): string => {
  let signature = signatures.get(message)
  if (signature === undefined) {
    signature = `${message.id}\u0000${message.role}\u0000${JSON.stringify(message.parts)}`
    signatures.set(message, signature)
  }
  return signature
}

interface Rendered {
  readonly version: number
  readonly at: number
  readonly model: string
  readonly blocks: ReadonlyArray<Block>
  readonly messages: ReadonlyArray<Message.Message>
  readonly turnReminder: string | undefined
  readonly toolsSha256: string | undefined
  /** Tokens the next call could read if nothing changed: the prefix this call left in the cache. */
  readonly cachedEnd: number
  readonly ttlMs: number
}

const sharedBlocks = (a: ReadonlyArray<Block>, b: ReadonlyArray<Block>): number => {
  // Chain keys: equal at i means equal through i, so the shared run is found by binary search.
  let low = 0
  let high = Math.min(a.length, b.length)
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (a[middle - 1]?.key === b[middle - 1]?.key) low = middle
    else high = middle - 1
  }
  return low
}

const explain = (
  previous: Rendered | undefined,
  lastAny: Rendered | undefined,
  current: Rendered,
  between: ReadonlyArray<TimedEvent>,
  read: number,
  minimum: number,
  lostRate: number,
  noCache: boolean
): Cause | null => {
  const none = { sharedTokens: 0, divergedAt: null, message: null, events: [], lost: 0 }
  if (previous === undefined) {
    if (lastAny !== undefined && lastAny.model !== current.model) {
      return {
        ...none,
        kind: "model-switch",
        detail: `the previous call went to ${lastAny.model}; nothing is cached for ${current.model}`,
        lost: (Math.min(lastAny.cachedEnd, current.blocks.at(-1)?.end ?? 0) * lostRate) / 1_000_000
      }
    }
    return { ...none, kind: "cold-start", detail: "the first call to this provider and model" }
  }
  const shared = sharedBlocks(previous.blocks, current.blocks)
  const sharedTokens = shared === 0 ? 0 : (current.blocks[shared - 1]?.end ?? 0)
  const potential = Math.min(previous.cachedEnd, sharedTokens)
  const lost =
    (Math.max(0, Math.min(previous.cachedEnd, current.blocks.at(-1)?.end ?? 0) - read) * lostRate) / 1_000_000
  const divergedAt = current.blocks[shared]?.label ?? null
  const base = { sharedTokens, divergedAt, lost }
  if (previous.cachedEnd > 0 && current.at - previous.at > previous.ttlMs && read < potential) {
    return {
      ...base,
      message: null,
      events: [],
      kind: "ttl-expiry",
      detail: `${Math.round((current.at - previous.at) / 1000)}s since the previous call: its cache entries (TTL ${Math.round(previous.ttlMs / 60_000)} min) expired`
    }
  }
  if (!noCache && (current.blocks.at(-1)?.end ?? 0) < minimum) {
    return {
      ...base,
      message: null,
      events: [],
      kind: "below-minimum",
      detail: `the prompt is below the model's minimum cacheable length (${minimum} tokens)`
    }
  }
  if (current.blocks[shared]?.dropped === true && previous.blocks[shared]?.dropped !== true) {
    return {
      ...base,
      message: null,
      events: [],
      kind: "reasoning-dropped",
      detail: `a new user message: the server drops the reasoning of earlier turns, so the prefix ends at the first reasoning item (${divergedAt})`
    }
  }
  // The first window message that differs, and the events between the renders that touched it.
  let index = 0
  while (
    index < previous.messages.length &&
    index < current.messages.length &&
    signatureOf(previous.messages[index] as Message.Message) === signatureOf(current.messages[index] as Message.Message)
  )
    index++
  const before = previous.messages[index]
  const after = current.messages[index]
  const changed = index < previous.messages.length
  const message =
    after !== undefined && changed
      ? { index, id: after.id, preview: Message.textOf(after).replace(/\s+/g, " ").slice(0, 80) }
      : before !== undefined
        ? { index, id: before.id, preview: Message.textOf(before).replace(/\s+/g, " ").slice(0, 80) }
        : null
  const candidates = between.filter((entry) => kindOfEvent(entry.event) !== undefined)
  const ids = [before?.id, after?.id].filter((id): id is string => id !== undefined)
  const touching = changed
    ? candidates.filter((entry) => {
        const text = JSON.stringify(entry.event)
        return ids.some((id) => text.includes(id))
      })
    : []
  const sectionOf = (label: string | null) =>
    label === null
      ? ""
      : label.startsWith("tools")
        ? "tools"
        : label.startsWith("system") || label === "instructions"
          ? "system"
          : "messages"
  const section = sectionOf(divergedAt)
  if (previous.toolsSha256 !== current.toolsSha256 && (section === "tools" || section === "")) {
    return { ...base, message: null, events: [], kind: "tool-change", detail: "the tool definitions changed" }
  }
  // Events that touched the differing message first; else every prompt-changing event between the
  // renders (signals, task state and knowledge are no history message, and still move the prefix).
  const responsible = touching.length > 0 ? touching : shared < current.blocks.length ? candidates : []
  if (responsible.length > 0 && shared < previous.blocks.length) {
    // The kind with the most events names the cause; every responsible event is listed.
    const counts = new Map<CauseKind, number>()
    for (const entry of responsible) {
      const kind = kindOfEvent(entry.event)
      if (kind !== undefined) counts.set(kind, (counts.get(kind) ?? 0) + 1)
    }
    const kind = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "edit"
    return {
      ...base,
      message: changed ? message : null,
      events: responsible.map((entry) => ({ version: entry.version, type: entry.event._tag })),
      kind,
      detail: `${[...counts.keys()].join(", ")} between v${previous.version} and v${current.version} changed ${
        changed && message !== null ? `message ${message.index} (${message.id})` : divergedAt
      }`
    }
  }
  if (shared < previous.blocks.length && previous.turnReminder !== undefined && !changed) {
    return {
      ...base,
      message: null,
      events: [],
      kind: "turn-reminder",
      detail: `the turn reminder sat inside the previous prefix (${divergedAt}) and moved or changed`
    }
  }
  if (shared < previous.blocks.length && changed) {
    return {
      ...base,
      message,
      events: [],
      kind: section === "system" ? "system-change" : "edit",
      detail: `${divergedAt} differs from the previous render with no event between them that explains it (an edit in place)`
    }
  }
  if (!noCache && sharedTokens > 0 && sharedTokens < minimum) {
    return {
      ...base,
      message: null,
      events: [],
      kind: "below-minimum",
      detail: `the prefix is below the model's minimum cacheable length (${minimum} tokens)`
    }
  }
  if (shared >= previous.blocks.length && read < previous.cachedEnd) {
    return {
      ...base,
      message: null,
      events: [],
      kind: "lookback",
      detail:
        "the previous prefix is intact but no breakpoint reaches it (more than 20 blocks after it, or no breakpoint)"
    }
  }
  if (shared < previous.blocks.length) {
    return {
      ...base,
      message,
      events: [],
      kind: "edit",
      detail: `${divergedAt} differs from the previous render with no event between them that explains it`
    }
  }
  return noCache
    ? { ...base, lost: 0, message: null, events: [], kind: "no-cache", detail: "the provider keeps no prompt cache" }
    : {
        ...base,
        lost: 0,
        message: null,
        events: [],
        kind: "new-content",
        detail: "the prefix held; the new part is large"
      }
}

// ---------------------------------------------------------------------------------------------------
// The model

interface Live {
  expiresAt: number
  readonly ttlMs: number
}

/**
 * Predict every model call of a stream's events (in version order) and set it beside the recorded
 * usage. Reads no usage but the first call's (for the unknown prefix).
 * @since 0.5.0
 */
export const predict = (events: ReadonlyArray<TimedEvent>, options: Options = {}): Report => {
  const table = options.table ?? CacheTable.current
  const count = blockCount
  const link = linker(options.hash ?? EventHash.sha256)
  const json = jsonOnce()
  const calls: Array<Call> = []
  const live = new Map<string, Map<string, Live>>()
  const last = new Map<string, Rendered>()
  let lastAny: Rendered | undefined
  // The window is read at renders only: folded up to a render when the caller did not give it.
  let foldedWindow = Window.empty
  let folded = 0
  const windowBefore = (position: number, version: number): Window.Window => {
    const given = options.windowAt?.(version)
    if (given !== undefined) {
      foldedWindow = given
      folded = position
      return given
    }
    for (; folded < position; folded++) {
      const before = events[folded]
      if (before !== undefined) foldedWindow = Window.evolve(foldedWindow, before.event)
    }
    return foldedWindow
  }
  const blobs = new Map<string, string>()
  let unknownPrefix: UnknownPrefix | null = null
  const given = options.unknownPrefix
  let prefixDecided = given !== undefined && given !== "auto"
  if (typeof given === "number" && given > 0) unknownPrefix = { tokens: given, warmTokens: 0, note: "given" }
  if (typeof given === "object") unknownPrefix = given
  let sinceLast: Array<TimedEvent> = []
  let pending: { readonly index: number; readonly priced: CacheTable.Resolved } | undefined

  for (const [position, entry] of events.entries()) {
    const event = entry.event
    if (event._tag === "UsageReported") {
      if (pending !== undefined) {
        const call = calls[pending.index]
        if (call !== undefined && call.recorded === null) {
          const recorded = priceUsage(event, options)
          calls[pending.index] = {
            ...call,
            recorded,
            readError:
              recorded.cacheRead === 0
                ? call.predicted.cacheRead === 0
                  ? 0
                  : null
                : (call.predicted.cacheRead - recorded.cacheRead) / recorded.cacheRead
          }
        }
        pending = undefined
      }
    } else if (event._tag === "PromptRendered") {
      RenderRecord.collectBlobs([event], blobs)
      const window = windowBefore(position, entry.version)
      const priced = CacheTable.resolve(event.provider, event.model, options.pricing, table)
      const scope = `${priced.provider}/${event.model}`
      const rebuilt = options.rebuilt?.(entry.version) ?? RenderRecord.rebuild(window, event, entry.version, blobs)
      const raws: ReadonlyArray<RawBlock> = Either.isRight(rebuilt)
        ? rawBlocks(priced.provider, rebuilt.right.request, json, priced.encryptedReasoning, priced.itemFramingTokens)
        : [{ label: "render", text: event.sha256 }]
      // A render that cannot be rebuilt: one opaque block of its recorded size.
      // Counted with o200k, scaled to the provider's tokenizer (the table's ratio).
      const scale = priced.tokensPerCounted
      const counter = Either.isRight(rebuilt)
        ? scale === 1
          ? count
          : (text: string) => Math.round(count(text) * scale)
        : (text: string) => Math.round((text === event.sha256 ? event.tokens.total : count(text)) * scale)
      if (!prefixDecided) {
        // The first call decides the unknown prefix from its own recorded usage, read ahead here.
        prefixDecided = true
        const counted = chainBlocks(raws, counter, link).at(-1)?.end ?? 0
        const usage = events
          .slice(position + 1)
          .find((next) => next.event._tag === "UsageReported" || next.event._tag === "PromptRendered")?.event
        if (usage?._tag === "UsageReported") {
          const gap = usage.inputTokens - counted
          if (gap > Math.max(256, 0.05 * usage.inputTokens)) {
            const warm = Math.min(gap, usage.cacheReadTokens)
            unknownPrefix = {
              tokens: gap,
              warmTokens: warm,
              note: `estimated from the first call's recorded usage (${usage.inputTokens} input tokens, ${counted} counted in the render): the system prompt and tool definitions the log does not hold${
                warm > 0 ? `; its first ${warm} tokens were already cached and are taken as kept warm` : ""
              }`
            }
          }
        }
      }
      const firstTtl = raws.find((raw) => raw.ttl !== undefined)?.ttl
      const head =
        unknownPrefix === null
          ? undefined
          : {
              tokens: unknownPrefix.tokens,
              warm: unknownPrefix.warmTokens,
              ttl: priced.rules.kind === "breakpoints" ? (firstTtl ?? "5m") : undefined
            }
      const blocks = chainBlocks(raws, counter, link, head)
      const total = blocks.at(-1)?.end ?? 0
      const at = entry.recordedAt
      const entries = live.get(scope) ?? new Map<string, Live>()
      live.set(scope, entries)
      for (const [key, value] of entries) if (value.expiresAt < at) entries.delete(key)
      // The warm part of the unknown prefix is cached before the stream starts, and stays so.
      const warmBlock = blocks[0]?.label === warmLabel ? blocks[0] : undefined
      if (warmBlock !== undefined) entries.set(warmBlock.key, { expiresAt: Number.POSITIVE_INFINITY, ttlMs: 0 })

      let read = 0
      let write = 0
      let write1h = 0
      let cachedEnd = 0
      let ttlMs = 0
      const rules = priced.rules
      if (rules.kind === "breakpoints") {
        const breakpoints = blocks.flatMap((block, index) => (block.ttl === undefined ? [] : [index]))
        for (const point of breakpoints) {
          for (let index = point; index >= Math.max(0, point - rules.lookbackBlocks); index--) {
            const block = blocks[index] as Block
            const hit = entries.get(block.key)
            if (hit !== undefined) {
              hit.expiresAt = Math.max(hit.expiresAt, at + hit.ttlMs)
              read = Math.max(read, block.end)
              break
            }
          }
        }
        let lastWritten = 0
        let last1h = 0
        for (const point of breakpoints) {
          const block = blocks[point] as Block
          if (block.end < priced.minCacheableTokens) continue
          const ttl = block.ttl ?? "5m"
          const blockTtl = rules.ttlMs[ttl]
          const existing = entries.get(block.key)
          entries.set(block.key, { expiresAt: Math.max(existing?.expiresAt ?? 0, at + blockTtl), ttlMs: blockTtl })
          lastWritten = Math.max(lastWritten, block.end)
          if (ttl === "1h") last1h = Math.max(last1h, block.end)
          ttlMs = Math.max(ttlMs, blockTtl)
        }
        write = Math.max(0, lastWritten - read)
        write1h = Math.max(0, Math.min(last1h, lastWritten) - read)
        cachedEnd = Math.max(lastWritten, read)
      } else if (rules.kind === "prefix") {
        // The previous call's output is cached with its prompt (the server keeps the tokens it
        // generated): the output items that follow that prompt intact in this render are entries too.
        const before = last.get(scope)
        if (before !== undefined && before.at + rules.ttlMs >= at) {
          const kept = sharedBlocks(before.blocks, blocks)
          if (kept === before.blocks.length && kept > 0) {
            for (let index = kept; index < blocks.length && blocks[index]?.output === true; index++) {
              const block = blocks[index] as Block
              if (!entries.has(block.key))
                entries.set(block.key, { expiresAt: before.at + rules.ttlMs, ttlMs: rules.ttlMs })
            }
          }
        }
        let matched = 0
        for (const block of blocks) {
          const hit = entries.get(block.key)
          if (hit === undefined) continue
          hit.expiresAt = Math.max(hit.expiresAt, at + hit.ttlMs)
          matched = Math.max(matched, block.end)
        }
        read =
          matched < rules.minTokens
            ? 0
            : rules.minTokens + Math.floor((matched - rules.minTokens) / rules.stepTokens) * rules.stepTokens
        if (total >= rules.minTokens) {
          for (const block of blocks) {
            const existing = entries.get(block.key)?.expiresAt ?? 0
            entries.set(block.key, { expiresAt: Math.max(existing, at + rules.ttlMs), ttlMs: rules.ttlMs })
          }
          cachedEnd = rules.minTokens + Math.floor((total - rules.minTokens) / rules.stepTokens) * rules.stepTokens
        }
        ttlMs = rules.ttlMs
      }
      const predicted = splitOf(priced, total, read, write, write1h)
      const rendered: Rendered = {
        version: entry.version,
        at,
        model: event.model,
        blocks,
        messages: Window.messages(window),
        turnReminder: event.render?.turnReminder,
        toolsSha256: event.render?.toolsSha256,
        cachedEnd,
        ttlMs
      }
      const lostRate = (write > 0 ? priced.write5m : priced.input) - priced.cacheRead
      const previous = last.get(scope)
      // A cause for every call that missed, and for a hit that still read less than the previous call left.
      const broke = predicted.class !== "hit" || (previous !== undefined && read < Math.min(previous.cachedEnd, total))
      const cause = !broke
        ? null
        : explain(
            previous,
            lastAny,
            rendered,
            sinceLast,
            read,
            priced.minCacheableTokens,
            Math.max(0, lostRate),
            priced.rules.kind === "none"
          )
      calls.push({
        version: entry.version,
        at,
        provider: priced.provider,
        model: event.model,
        predicted,
        recorded: null,
        readError: null,
        cause,
        rebuilt: Either.isRight(rebuilt)
      })
      pending = { index: calls.length - 1, priced }
      last.set(scope, rendered)
      lastAny = rendered
      sinceLast = []
    } else {
      sinceLast.push(entry)
    }
  }

  const causes = new Map<CauseKind, { calls: number; lost: number }>()
  for (const call of calls) {
    if (call.cause === null) continue
    const kept = causes.get(call.cause.kind) ?? { calls: 0, lost: 0 }
    causes.set(call.cause.kind, { calls: kept.calls + 1, lost: kept.lost + call.cause.lost })
  }
  const sum = (splits: ReadonlyArray<Split>) => ({
    promptTokens: splits.reduce((t, s) => t + s.promptTokens, 0),
    uncached: splits.reduce((t, s) => t + s.uncached, 0),
    cacheWrite: splits.reduce((t, s) => t + s.cacheWrite, 0),
    cacheWrite1h: splits.reduce((t, s) => t + s.cacheWrite1h, 0),
    cacheRead: splits.reduce((t, s) => t + s.cacheRead, 0),
    cost: splits.reduce((t, s) => t + s.cost, 0)
  })
  const recorded = calls.flatMap((call) => (call.recorded === null ? [] : [call.recorded]))
  return {
    table: table.version,
    unknownPrefix,
    calls,
    causes: [...causes]
      .map(([kind, value]) => ({ kind, ...value }))
      .sort((a, b) => b.lost - a.lost || b.calls - a.calls),
    totals: {
      predicted: sum(calls.map((call) => call.predicted)),
      recorded: recorded.length === 0 ? null : sum(recorded)
    }
  }
}

/** How well the predictions match the recordings. @since 0.5.0 */
export interface Accuracy {
  /** Calls with recorded usage. */
  readonly recorded: number
  /** Share of them whose predicted cache read is within ±10% of the recorded one (both 0 counts). */
  readonly readWithin10: number
  /** Share classified hit / partial / miss as the recorded usage is. */
  readonly classAgrees: number
  /** Predicted over recorded total input cost (1 = exact). */
  readonly costRatio: number | null
}

/** The accuracy figures of a report. @since 0.5.0 */
export const accuracy = (report: Report): Accuracy => {
  const pairs = report.calls.flatMap((call) => (call.recorded === null ? [] : [{ call, recorded: call.recorded }]))
  const within = pairs.filter(({ call, recorded }) =>
    recorded.cacheRead === 0
      ? call.predicted.cacheRead === 0
      : Math.abs(call.predicted.cacheRead - recorded.cacheRead) <= 0.1 * recorded.cacheRead
  ).length
  const agree = pairs.filter(({ call, recorded }) => call.predicted.class === recorded.class).length
  const recordedCost = pairs.reduce((t, { recorded }) => t + recorded.cost, 0)
  const predictedCost = pairs.reduce((t, { call }) => t + call.predicted.cost, 0)
  return {
    recorded: pairs.length,
    readWithin10: pairs.length === 0 ? 0 : within / pairs.length,
    classAgrees: pairs.length === 0 ? 0 : agree / pairs.length,
    costRatio: recordedCost === 0 ? null : predictedCost / recordedCost
  }
}
