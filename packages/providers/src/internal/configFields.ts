/**
 * The fields every builder config has, as schema fields: the one declaration `CtxBuilder.CommonConfig` and
 * each provider's `Config` are built from (ADR 0156). Here, not in `CtxBuilder.ts`, because the provider
 * modules need them while `CtxBuilder.ts` (which imports those modules) is still loading.
 */
import * as Schema from "effect/Schema"
import * as Truncation from "../Truncation.js"
import { formats } from "./frameworkFormats.js"

/** Exact optionals: a builder config does not take an explicit `undefined`. */
export const exact = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** The fields of `CtxBuilder.CommonConfig`. */
export const commonConfigFields = {
  model: Schema.String,
  /** The model's context window in tokens (defaults per provider). */
  contextWindow: exact(Schema.Number),
  /** Share of the budget at which `needsCompression` turns true. Default 0.8. */
  compressionThreshold: exact(Schema.Number),
  /** Character limits per tool; when absent the limit follows the budget (`toolOutputShare`). */
  toolOutputLimits: exact(Truncation.Limits),
  /** Share of the budget one tool output may take, in tokens (default per provider). */
  toolOutputShare: exact(Schema.Number),
  /** Default `max_tokens` when the render does not say; also the output reserve of the budget. */
  maxOutputTokens: exact(Schema.Number),
  /**
   * Hand the render over in a framework's form (the AI SDK prompt, OpenAI Agents items, LangChain
   * messages) instead of the provider's request body: see `FrameworkFormat`. Since 0.8.0.
   */
  format: exact(Schema.Literal(...formats))
}
