/**
 * OpenAI Chat Completions messages keep every field or refuse it by name (issue 35, build item 5):
 * a message's `name`, the `developer` role, an assistant's `refusal` (field and content part) and
 * `audio`, and any field the adapter does not model are kept (message `name`, opaque
 * `providerOptions.openaiChat`) and given back by `toOpenAI`; what cannot be kept is an
 * `AdapterError` naming the field and the message's index. Nothing is dropped silently either way.
 */
import { Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions"
import { fromOpenAI, toOpenAI } from "../src/adapters/openai.js"

const roundTrip = (messages: ReadonlyArray<ChatCompletionMessageParam>) =>
  Either.flatMap(fromOpenAI(messages), toOpenAI)

const refusal = (result: Either.Either<unknown, { readonly message: string }>): string =>
  Either.isLeft(result) ? result.left.message : assert.fail("expected an AdapterError")

// Fields a caller may hand over that the SDK's param types do not list (a response message reused as
// history carries `annotations`); the adapter takes them at run time.
const loose = (messages: ReadonlyArray<unknown>) => messages as ReadonlyArray<ChatCompletionMessageParam>

describe("fromOpenAI / toOpenAI keep every field", () => {
  it("a message's name is kept on the ctxlog message and given back", () => {
    const messages: Array<ChatCompletionMessageParam> = [
      { role: "system", content: "Be brief.", name: "policy" },
      { role: "user", content: "Hi", name: "alice" },
      { role: "assistant", content: "Hello Alice.", name: "helper" }
    ]
    const inputs = Either.getOrThrow(fromOpenAI(messages))
    assert.deepStrictEqual(
      inputs.map((input) => input.name),
      ["policy", "alice", "helper"]
    )
    assert.deepStrictEqual(Either.getOrThrow(toOpenAI(inputs)), messages)
  })

  it("a developer message stays a developer message", () => {
    const messages: Array<ChatCompletionMessageParam> = [{ role: "developer", content: "Use tools." }]
    const [input] = Either.getOrThrow(fromOpenAI(messages))
    assert.strictEqual(input?.role, "system")
    assert.deepStrictEqual(Either.getOrThrow(toOpenAI([input as Message.MessageInput])), messages)
  })

  it("an assistant's refusal (field and content part) and audio come back as given", () => {
    const messages: Array<ChatCompletionMessageParam> = [
      { role: "user", content: "Do the bad thing." },
      {
        role: "assistant",
        content: [
          { type: "text", text: "I can't." },
          { type: "refusal", refusal: "That request breaks the policy." }
        ],
        refusal: "That request breaks the policy.",
        audio: { id: "audio_abc" }
      }
    ]
    assert.deepStrictEqual(Either.getOrThrow(roundTrip(messages)), messages)
  })

  it("fields the adapter does not model are kept opaque and given back", () => {
    const messages = loose([
      {
        role: "assistant",
        content: [
          {
            type: "text",
            text: "See the docs.",
            annotations: [{ type: "url_citation", url_citation: { url: "https://example.com" } }]
          }
        ],
        annotations: [{ type: "url_citation", url_citation: { url: "https://example.com", title: "Docs" } }]
      }
    ])
    const [input] = Either.getOrThrow(fromOpenAI(messages))
    assert.deepStrictEqual(input?.providerOptions, {
      openaiChat: {
        annotations: [{ type: "url_citation", url_citation: { url: "https://example.com", title: "Docs" } }]
      }
    })
    assert.deepStrictEqual(Either.getOrThrow(toOpenAI(Either.getOrThrow(fromOpenAI(messages)))), messages)
  })

  it("a field that is not JSON is refused by name", () => {
    const messages = loose([{ role: "user", content: "hi", metadata: { at: 10n } }])
    assert.include(refusal(fromOpenAI(messages)), "OpenAI message 0 metadata")
  })

  it("a legacy function_call on an assistant message is refused by name", () => {
    const messages = loose([{ role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } }])
    assert.include(refusal(fromOpenAI(messages)), "OpenAI message 0 function_call")
  })

  it("a custom tool call is refused naming the call", () => {
    const messages = loose([
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "custom", custom: { name: "x", input: "" } }] }
    ])
    assert.include(refusal(fromOpenAI(messages)), "OpenAI message 0 tool_calls[0]")
  })

  it("an image in a system message is refused, not dropped", () => {
    const messages = loose([
      {
        role: "system",
        content: [
          { type: "text", text: "Look:" },
          { type: "image_url", image_url: { url: "https://example.com/a.png" } }
        ]
      }
    ])
    assert.include(refusal(fromOpenAI(messages)), "OpenAI message 0 content[1]")
  })
})

describe("toOpenAI refuses what a chat message cannot carry", () => {
  it("an image in an assistant message", () => {
    const result = toOpenAI([{ role: "assistant", parts: [Message.text("Here"), Message.imageUrl("https://x/a.png")] }])
    assert.include(refusal(result), "OpenAI message 0 parts[1]")
  })

  it("a tool call in a user message", () => {
    const result = toOpenAI([{ role: "user", parts: [Message.toolCall("c1", "f", {})] }])
    assert.include(refusal(result), "OpenAI message 0 parts[0]")
  })

  it("a tool message's name other than its call's tool", () => {
    const call: Message.MessageInput = { role: "assistant", parts: [Message.toolCall("c1", "search", {})] }
    const same = toOpenAI([call, { ...Message.tool("c1", "ok"), name: "search" }])
    assert.isTrue(Either.isRight(same), "the name of the called tool is implied by the call")
    const other = toOpenAI([call, { ...Message.tool("c1", "ok"), name: "fetcher" }])
    assert.include(refusal(other), "OpenAI message 1 name")
  })
})
