/**
 * A builder config and the client call that sends what that builder renders, as one value: the
 * request type of the config ({@link RequestOf}) is the type the call takes, so pairing an Anthropic
 * builder with an OpenAI client does not compile, and no caller casts a rendered request to send it.
 *
 * A pair whose provider is known only at run time (the agent's `--provider`) is an {@link AnyPair}:
 * it is used through a function generic in the config ({@link AnyPair.use}), where the rendered
 * request and the call keep the same type.
 *
 * ```ts
 * const pair = ProviderPair.make({ provider: "anthropic", model }, (request) => client.streamRequest(request))
 * pair.use((p) => Turn.open(stream, { ...policy, builder: p.config }).pipe(
 *   Effect.flatMap((session) => session.run(input, (rendered) => call(p.send(rendered.built.request, {}))))
 * ))
 * ```
 *
 * @since 0.8.0
 */
import {
  type CtxBuilder,
  forProvider,
  type ProviderConfig,
  type RequestOf as CtxBuilderRequestOf
} from "./CtxBuilder.js"

/**
 * The request `CtxBuilder.forProvider(config)` renders for a config (`CtxBuilder.RequestOf`).
 * @since 0.8.0
 */
export type RequestOf<C extends ProviderConfig> = CtxBuilderRequestOf<C>

/** What the render that made a request says about it, for the call that sends it. @since 0.8.0 */
export interface RenderContext {
  /** The turn reminder the render carried (prepended to its last user message). */
  readonly turnReminder?: string | undefined
}

/**
 * A builder config and the call that sends its requests: `send` takes exactly what the config's
 * builder renders ({@link RequestOf}).
 * @since 0.8.0
 */
export interface ProviderPair<C extends ProviderConfig, A> {
  readonly config: C
  readonly send: (request: RequestOf<C>, render: RenderContext) => A
}

/**
 * A {@link ProviderPair} whose config is chosen at run time. `config` is the builder config (for what
 * needs only the config); `use` hands the pair to a function generic in the config, where the request a
 * turn renders with `pair.config` and `pair.send` keep one type.
 * @since 0.8.0
 */
export interface AnyPair<A> {
  readonly config: ProviderConfig
  readonly use: <X>(f: <C extends ProviderConfig>(pair: ProviderPair<C, A>) => X) => X
}

/**
 * Pair a builder config with the call that sends its requests (checked at compile time: `send`'s
 * request type is the config's {@link RequestOf}).
 * @since 0.8.0
 */
export const make = <const C extends ProviderConfig, A>(
  config: C,
  send: (request: RequestOf<C>, render: RenderContext) => A
): AnyPair<A> => {
  const pair: ProviderPair<C, A> = { config, send }
  return { config, use: (f) => f(pair) }
}

/**
 * The builder of a config, typed by the config's {@link RequestOf}. The one place the type map meets
 * `forProvider`'s runtime choice (its test renders every provider and checks the body it names).
 * @since 0.8.0
 */
export const builderOf = <C extends ProviderConfig>(config: C): CtxBuilder<RequestOf<C>> =>
  forProvider(config) as CtxBuilder<RequestOf<C>>
