/**
 * What the integrations take: where the log is (as `createContext`), the stream, the policy; and the
 * policy used when none is given.
 *
 * @since 0.1.0
 */
import type { ContextOptions, TurnPolicy } from "@ctxlog/client"

/** Options of the integrations: where the log is (as `createContext`), the stream, the policy. @since 0.1.0 */
export type CtxlogOptions = ContextOptions & {
  /** The stream every call of this model or agent goes to. */
  readonly stream: string
  /** The turn policy (default: the model's builder, see {@link defaultPolicy}). */
  readonly policy?: TurnPolicy
  /** The context window of the default policy (default: the builder's own default). */
  readonly contextWindow?: number
}

/** The builder for a model's provider id (`openai.chat`, `anthropic.messages`, ...): its prefix, else `default`. @since 0.1.0 */
export const builderOf = (provider: string): "anthropic" | "openai" | "ollama" | "default" => {
  const prefix = provider.split(".")[0] ?? ""
  return prefix === "anthropic" || prefix === "openai" || prefix === "ollama" ? prefix : "default"
}

/** The policy used when none is given: the model's builder, the given context window, default tiers. @since 0.1.0 */
export const defaultPolicy = (model: { readonly provider: string; readonly modelId: string }, contextWindow?: number) =>
  ({
    builder: {
      provider: builderOf(model.provider),
      model: model.modelId,
      // The builder config is recorded (`TurnPolicySet`) and its schema's optionals are exact.
      ...(contextWindow === undefined ? {} : { contextWindow })
    },
    compaction: {}
  }) satisfies TurnPolicy
