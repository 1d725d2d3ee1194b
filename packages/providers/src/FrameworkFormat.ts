/**
 * Framework formats: a render handed to an agent framework in the framework's own form, recorded as
 * that form. When an integration (the AI SDK middleware and `prepareStep`, the OpenAI Agents session,
 * the LangGraph pre-model hook) sends the window through a framework, what the model receives is the
 * framework's prompt, not the provider builder's request body. With `format` in the builder config the
 * builder's request *is* that prompt: the provider builder decides the window (selection, order,
 * roles, wrappers, budget, validation; its stats stay the render's stats) and the format turns the
 * same render into the framework's messages. `PromptRendered` records the config with its `format`, so
 * `ctxlog render` rebuilds exactly what the framework handed the model (the framework may convert
 * further, into its provider's HTTP body; that step is the framework's).
 *
 * Each format lives in `formats/` and imports no framework package: its request is plain JSON.
 * @since 0.8.0
 */
import type { Window } from "@ctxlog/core"
import * as Either from "effect/Either"
import type { AnyRequest, BuildOptions, Built, CtxBuilder, RenderedRequest } from "./CtxBuilder.js"
import * as aiSdk from "./formats/aiSdk.js"
import * as langchain from "./formats/langchain.js"
import * as openaiAgents from "./formats/openaiAgents.js"
import type { InvalidRequest } from "./InvalidRequest.js"
import { formats as frameworkFormats } from "./internal/frameworkFormats.js"

/** The framework forms a render can be handed over in. @since 0.8.0 */
export const formats: readonly ["ai-sdk", "openai-agents", "langchain"] = frameworkFormats
/** @since 0.8.0 */
export type FrameworkFormat = (typeof formats)[number]

/**
 * A render in a framework's form: `format` names the form, the rest is what the framework got
 * (see each format's module for its fields).
 * @since 0.8.0
 */
export interface FrameworkRequest {
  readonly format: FrameworkFormat
  readonly [key: string]: unknown
}

/** What a format is given: the window, the provider builder's render of it, and the render's options. @since 0.8.0 */
export interface FormatInput {
  readonly window: Window.Window
  readonly built: Built<RenderedRequest>
  readonly options: BuildOptions
  /** The provider builder's name (`openai`, `anthropic`, ...). */
  readonly provider: string
}

/** A format: the provider builder's render as the framework's request, or why it cannot be. @since 0.8.0 */
export type Format = (input: FormatInput) => Either.Either<FrameworkRequest, InvalidRequest>

const byName: { readonly [F in FrameworkFormat]: Format } = {
  "ai-sdk": aiSdk.render,
  "openai-agents": openaiAgents.render,
  langchain: langchain.render
}

/**
 * The provider builder with its requests in `format`: everything but `build` is the builder's own, and
 * `build` renders with it, then hands the render to the format.
 * @since 0.8.0
 */
export const wrap = (builder: CtxBuilder<RenderedRequest>, format: FrameworkFormat): CtxBuilder<AnyRequest> => ({
  ...builder,
  build: (window, options = {}) =>
    Either.flatMap(builder.build(window, options), (built) =>
      Either.map(
        byName[format]({ window, built, options, provider: builder.name }),
        (request): Built<AnyRequest> => ({ ...built, request })
      )
    )
})
