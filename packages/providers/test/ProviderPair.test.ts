import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type { CtxBuilder, DefaultCtx, FrameworkFormat } from "../src/index.js"
import { ProviderPair } from "../src/index.js"
import type { AnthropicRequest, ChatCompletionsRequest, ResponsesRequest } from "../src/ProviderRequest.js"
import { fixtureWindow } from "./fixture.js"

// What each pair's send received: the render of its own builder, as the builder made it.
const sendRendered = (pair: ProviderPair.AnyPair<unknown>) =>
  pair.use((typed) => {
    const built = ProviderPair.builderOf(typed.config).build(fixtureWindow)
    if (Either.isLeft(built)) throw new Error(built.left.message)
    return { sent: typed.send(built.right.request, {}), request: built.right.request }
  })

describe("ProviderPair", () => {
  it("RequestOf names the body each builder renders", () => {
    expectTypeOf<ProviderPair.RequestOf<{ provider: "anthropic"; model: string }>>().toEqualTypeOf<AnthropicRequest>()
    expectTypeOf<
      ProviderPair.RequestOf<{ provider: "openai"; api: "responses"; model: string }>
    >().toEqualTypeOf<ResponsesRequest>()
    expectTypeOf<
      ProviderPair.RequestOf<{ provider: "openai"; model: string }>
    >().toEqualTypeOf<ChatCompletionsRequest>()
    expectTypeOf<
      ProviderPair.RequestOf<{ provider: "ollama"; model: string }>
    >().toEqualTypeOf<ChatCompletionsRequest>()
    expectTypeOf<
      ProviderPair.RequestOf<{ provider: "default"; model: string }>
    >().toEqualTypeOf<DefaultCtx.ChatCompletionsRequest>()
    // A framework format renders the framework's form; a config not known statically renders any request.
    expectTypeOf<
      ProviderPair.RequestOf<{ provider: "openai"; model: string; format: "ai-sdk" }>
    >().toEqualTypeOf<FrameworkFormat.FrameworkRequest>()
    expectTypeOf<ProviderPair.RequestOf<CtxBuilder.ProviderConfig>>().toEqualTypeOf<CtxBuilder.AnyRequest>()
  })

  it("a pair's send takes its builder's request and no other", () => {
    const anthropic = ProviderPair.make({ provider: "anthropic", model: "claude" }, (request) => request.max_tokens)
    const responses = ProviderPair.make({ provider: "openai", api: "responses", model: "gpt-5" }, (request) =>
      request.input.map((item) => item.type)
    )
    // @ts-expect-error an Anthropic builder paired with a Chat Completions client does not compile
    ProviderPair.make({ provider: "anthropic", model: "claude" }, (request: ChatCompletionsRequest) => request)
    ProviderPair.make(
      { provider: "openai", api: "responses", model: "gpt-5" },
      // @ts-expect-error a Responses builder paired with a Chat Completions client does not compile
      (request: ChatCompletionsRequest) => request.messages.length
    )
    // Each send reads its own body's fields from the render.
    expect(sendRendered(anthropic).sent).toBeGreaterThan(0)
    expect(sendRendered(responses).sent).toContain("message")
  })

  it("use hands the send its own builder's render", () => {
    const configs: ReadonlyArray<CtxBuilder.ProviderConfig & { readonly format?: undefined }> = [
      { provider: "anthropic", model: "claude-sonnet-4-5" },
      { provider: "openai", model: "gpt-4o" },
      { provider: "openai", api: "responses", model: "gpt-5" },
      { provider: "ollama", model: "qwen2.5:7b" },
      { provider: "default", model: "local-model" }
    ]
    for (const config of configs) {
      const pair = ProviderPair.make(config, (request) => ({ keys: Object.keys(request).sort() }))
      expect(pair.config).toBe(config)
      const { sent, request } = sendRendered(pair)
      expect(sent).toEqual({ keys: Object.keys(request).sort() })
      // The body of the provider the config names (what RequestOf says it is).
      const responses = config.provider === "openai" && config.api === "responses"
      expect("input" in request).toBe(responses)
      expect("stream_options" in request).toBe(config.provider !== "anthropic" && !responses)
      expect("max_tokens" in request).toBe(config.provider === "anthropic")
    }
  })
})
