/**
 * Prompt-cache rules and input prices per provider and model, as data: what {@link CacheModel} predicts
 * with. The table is dated and names its sources; when a provider changes a price or a rule, add a
 * row (or a new table version), never change the model's code.
 *
 * - Anthropic: caching only up to explicit `cache_control` breakpoints (at most 4), each looking back
 *   at most 20 blocks for an earlier entry; 5-minute and 1-hour TTLs, refreshed by every hit; a write
 *   costs 1.25x (5m) or 2x (1h) the input price, a read 0.1x; a prefix shorter than the model's
 *   minimum is not cached at all.
 * - OpenAI: automatic prefix caching of every prompt from 1,024 tokens, hits in 128-token steps,
 *   no write premium, the read discount per model; cached prefixes stay 5–10 minutes after their last
 *   use (the upper bound is the model's TTL).
 * - Ollama and the rest: no prompt cache (Ollama's KV reuse is local and free).
 * - Token counts: blocks are counted with o200k (OpenAI's tokenizer); a provider whose tokenizer
 *   counts the same text differently has a `tokensPerCounted` ratio (Anthropic: 1.07, measured, see
 *   {@link current}). An OpenAI reasoning item's `encrypted_content` stands for reasoning no text shows:
 *   `encryptedReasoning` sizes it from the ciphertext (735 bytes of overhead, 4.7 bytes a token: a least-
 *   squares line of each Codex fixture call's reasoning output tokens on its one item's ciphertext bytes,
 *   50 calls, in-sample; ADR 0141). A Responses reasoning item, function call or function call output is
 *   framed by `itemFramingTokens` tokens of the chat format past its strings (OpenAI: 9, measured on two
 *   Codex rollouts and checked on three others; ADR 0172), a message by 3.
 *
 * @since 0.5.0
 */

/** How a provider caches prompts. @since 0.5.0 */
export type Rules =
  | {
      readonly kind: "breakpoints"
      readonly maxBreakpoints: number
      /** Blocks before a breakpoint checked for an earlier entry. */
      readonly lookbackBlocks: number
      readonly ttlMs: { readonly "5m": number; readonly "1h": number }
      readonly writeMultiplier: { readonly "5m": number; readonly "1h": number }
      readonly readMultiplier: number
    }
  | {
      readonly kind: "prefix"
      readonly minTokens: number
      readonly stepTokens: number
      readonly ttlMs: number
      readonly readMultiplier: number
    }
  | { readonly kind: "none" }

/** Input prices of one model (USD per million tokens) and its cache minimum. @since 0.5.0 */
export interface ModelRow {
  readonly provider: string
  /** Matches a model name that starts with it (lower case; the longest match wins). */
  readonly prefix: string
  readonly input: number
  /** The cache-read price when it is not `input × readMultiplier`. */
  readonly cacheRead?: number
  /** Minimum cacheable prefix (Anthropic), when not the provider's default. */
  readonly minCacheableTokens?: number
  /** The model's tokens per o200k-counted token, when not the provider's default. @since 0.8.0 */
  readonly tokensPerCounted?: number
}

/**
 * How many tokens an OpenAI reasoning item's `encrypted_content` stands for: the model reads the
 * reasoning it encrypts, which no text of the request shows. The field is a Fernet token (base64url of
 * version, time, IV, AES-CBC ciphertext, HMAC); its decoded bytes past `overheadBytes` are taken at
 * `bytesPerToken`. @since 0.8.0
 */
export interface EncryptedReasoning {
  readonly overheadBytes: number
  readonly bytesPerToken: number
}

/** A provider's defaults: the price of a model the table does not list, its cache minimum, its tokenizer ratio. @since 0.8.0 */
export interface ProviderDefaults {
  readonly input: number
  readonly minCacheableTokens?: number
  /**
   * The provider's tokens per o200k-counted token of the same text (1 when absent): what a render
   * counted locally is scaled by it before it is set against the provider's prefix and usage.
   */
  readonly tokensPerCounted?: number
  /** Tokens of an encrypted reasoning item (OpenAI Responses). @since 0.8.0 */
  readonly encryptedReasoning?: EncryptedReasoning
  /**
   * Tokens of the chat format around each Responses reasoning item, function call and function call
   * output, past its strings (3 when absent: the "tokens per message" of OpenAI's token-counting
   * cookbook, which a message item keeps). @since 0.8.0
   */
  readonly itemFramingTokens?: number
}

/** A dated table. @since 0.5.0 */
export interface Table {
  readonly version: string
  readonly sources: ReadonlyArray<string>
  readonly providers: Readonly<Record<string, Rules>>
  /** Per provider: the minimum cacheable prefix, the tokenizer ratio and the price of a model the table does not list. */
  readonly defaults: Readonly<Record<string, ProviderDefaults>>
  readonly models: ReadonlyArray<ModelRow>
}

const minute = 60_000

/** The table this release predicts with. @since 0.5.0 */
export const current: Table = {
  version: "2026-11-28.4",
  sources: [
    // anthropic tokensPerCounted 1.07: the median, over the 45 consecutive call pairs of the four real
    // Claude Code sessions in fixtures/sessions whose prompt grew by a known part (recorded growth over
    // the o200k count of the same new blocks; ratios 0.72-1.66, aggregate 1.055). In-sample: measured on
    // the sessions the accuracy test scores (ADR 0138).
    "fixtures/sessions/claude-code (recorded usage against o200k counts, 2026-11-28)",
    // openai itemFramingTokens 9 (reasoning, function call and output items; a message keeps 3): the
    // framing at which the median, over the consecutive call pairs of the two Codex rollouts first in
    // fixtures/sessions (…24T20-12-23…, …25T15-12-14…; 50 pairs), of (recorded prompt growth − predicted
    // growth) is nearest 0 (3 → +19 tokens a step, 8 → +4, 9 → +1, 10 → −2). Derived on those two,
    // checked on the three added later (263 pairs): +23 → +5 tokens a step, median prompt error
    // −1.90% → −0.03% (ADR 0172).
    "fixtures/sessions/codex (recorded usage against o200k counts, 2026-11-28)",
    "https://platform.claude.com/docs/en/build-with-claude/prompt-caching",
    "https://docs.anthropic.com/en/docs/about-claude/pricing",
    "https://developers.openai.com/api/docs/guides/prompt-caching",
    "https://developers.openai.com/api/docs/pricing",
    "https://raw.githubusercontent.com/openai/openai-cookbook/main/examples/Prompt_Caching_201.ipynb",
    "https://cookbook.openai.com/examples/responses_api/reasoning_items",
    "https://cookbook.openai.com/examples/how_to_count_tokens_with_tiktoken"
  ],
  providers: {
    anthropic: {
      kind: "breakpoints",
      maxBreakpoints: 4,
      lookbackBlocks: 20,
      ttlMs: { "5m": 5 * minute, "1h": 60 * minute },
      writeMultiplier: { "5m": 1.25, "1h": 2 },
      readMultiplier: 0.1
    },
    openai: { kind: "prefix", minTokens: 1024, stepTokens: 128, ttlMs: 10 * minute, readMultiplier: 0.5 },
    ollama: { kind: "none" },
    default: { kind: "none" }
  },
  defaults: {
    anthropic: { input: 3, minCacheableTokens: 1024, tokensPerCounted: 1.07 },
    openai: { input: 1.25, encryptedReasoning: { overheadBytes: 735, bytesPerToken: 4.7 }, itemFramingTokens: 9 },
    ollama: { input: 0 },
    default: { input: 1 }
  },
  models: [
    { provider: "anthropic", prefix: "claude-opus-4-6", input: 5, minCacheableTokens: 4096 },
    { provider: "anthropic", prefix: "claude-opus-4-5", input: 5, minCacheableTokens: 4096 },
    { provider: "anthropic", prefix: "claude-opus-4-1", input: 15, minCacheableTokens: 1024 },
    { provider: "anthropic", prefix: "claude-opus-4", input: 15, minCacheableTokens: 1024 },
    { provider: "anthropic", prefix: "claude-sonnet-4", input: 3, minCacheableTokens: 1024 },
    { provider: "anthropic", prefix: "claude-3-7-sonnet", input: 3, minCacheableTokens: 1024 },
    { provider: "anthropic", prefix: "claude-3-5-sonnet", input: 3, minCacheableTokens: 1024 },
    { provider: "anthropic", prefix: "claude-haiku-4-5", input: 1, minCacheableTokens: 4096 },
    { provider: "anthropic", prefix: "claude-3-5-haiku", input: 0.8, minCacheableTokens: 2048 },
    { provider: "anthropic", prefix: "claude-3-haiku", input: 0.25, cacheRead: 0.03, minCacheableTokens: 2048 },
    { provider: "anthropic", prefix: "claude-3-opus", input: 15, minCacheableTokens: 1024 },
    { provider: "openai", prefix: "gpt-5", input: 1.25, cacheRead: 0.125 },
    { provider: "openai", prefix: "gpt-5-mini", input: 0.25, cacheRead: 0.025 },
    { provider: "openai", prefix: "gpt-5-nano", input: 0.05, cacheRead: 0.005 },
    { provider: "openai", prefix: "gpt-5-codex", input: 1.25, cacheRead: 0.125 },
    { provider: "openai", prefix: "gpt-5.1", input: 1.25, cacheRead: 0.125 },
    { provider: "openai", prefix: "codex-mini", input: 1.5, cacheRead: 0.375 },
    { provider: "openai", prefix: "gpt-4.1", input: 2, cacheRead: 0.5 },
    { provider: "openai", prefix: "gpt-4.1-mini", input: 0.4, cacheRead: 0.1 },
    { provider: "openai", prefix: "gpt-4.1-nano", input: 0.1, cacheRead: 0.025 },
    { provider: "openai", prefix: "gpt-4o", input: 2.5, cacheRead: 1.25 },
    { provider: "openai", prefix: "gpt-4o-mini", input: 0.15, cacheRead: 0.075 },
    { provider: "openai", prefix: "o3", input: 2, cacheRead: 0.5 },
    { provider: "openai", prefix: "o4-mini", input: 1.1, cacheRead: 0.275 }
  ]
}

/** What one model's calls cost and how they cache, resolved from a table. @since 0.5.0 */
export interface Resolved {
  readonly provider: string
  readonly model: string
  readonly rules: Rules
  /** USD per million tokens. */
  readonly input: number
  readonly cacheRead: number
  /** USD per million tokens, per TTL (equal to `input` where writes cost nothing extra). */
  readonly write5m: number
  readonly write1h: number
  readonly minCacheableTokens: number
  /** The model's tokens per o200k-counted token (1: the same tokenizer). @since 0.8.0 */
  readonly tokensPerCounted: number
  /** Tokens of an encrypted reasoning item, when the provider's defaults give a rate. @since 0.8.0 */
  readonly encryptedReasoning?: EncryptedReasoning | undefined
  /** Tokens of the chat format around each Responses item that is not a message, past its strings. @since 0.8.0 */
  readonly itemFramingTokens: number
  /** Whether the model has its own row (false: the provider's default price). */
  readonly listed: boolean
}

/** The provider a builder or a model name belongs to (`claude-*` is Anthropic, `gpt-*`/`o*` OpenAI). */
const providerOf = (provider: string, model: string): string => {
  if (provider in current.providers) return provider
  const name = model.toLowerCase()
  if (name.startsWith("claude")) return "anthropic"
  if (/^(gpt-|o\d|codex)/.test(name)) return "openai"
  return provider
}

/**
 * Rules and prices for a provider and model: the longest matching model row, else the provider's
 * default price. `pricing` overrides the input and read prices (a what-if config's `pricing`).
 * @since 0.5.0
 */
export const resolve = (
  provider: string,
  model: string,
  pricing?: { readonly input: number; readonly cacheRead: number },
  table: Table = current
): Resolved => {
  const family = providerOf(provider, model)
  const rules = table.providers[family] ?? { kind: "none" }
  const name = model.toLowerCase().replace(/^(anthropic|openai)[/.:]/, "")
  let row: ModelRow | undefined
  for (const candidate of table.models) {
    if (candidate.provider !== family || !name.startsWith(candidate.prefix)) continue
    if (row === undefined || candidate.prefix.length > row.prefix.length) row = candidate
  }
  const fallback = table.defaults[family] ?? table.defaults.default ?? { input: 1 }
  const input = pricing?.input ?? row?.input ?? fallback.input
  const readMultiplier = rules.kind === "none" ? 1 : rules.readMultiplier
  const cacheRead = pricing?.cacheRead ?? (pricing === undefined ? row?.cacheRead : undefined) ?? input * readMultiplier
  const writes = rules.kind === "breakpoints" ? rules.writeMultiplier : { "5m": 1, "1h": 1 }
  return {
    provider: family,
    model,
    rules,
    input,
    cacheRead,
    write5m: input * writes["5m"],
    write1h: input * writes["1h"],
    minCacheableTokens:
      rules.kind === "prefix" ? rules.minTokens : (row?.minCacheableTokens ?? fallback.minCacheableTokens ?? 0),
    tokensPerCounted: row?.tokensPerCounted ?? fallback.tokensPerCounted ?? 1,
    ...(fallback.encryptedReasoning === undefined ? {} : { encryptedReasoning: fallback.encryptedReasoning }),
    itemFramingTokens: fallback.itemFramingTokens ?? 3,
    listed: row !== undefined
  }
}
