/**
 * Issue 35: the LangChain adapter keeps what a LangChain message holds, or refuses it by name; it
 * never drops it. A message's `name`; `additional_kwargs`, `response_metadata`, `usage_metadata`, a
 * tool message's `artifact` (opaque under `providerOptions.langchain`); a content block's keys beyond
 * those read (`cache_control`, `id`); content given as blocks. A field that is not JSON is refused,
 * named.
 */
import { describe, expect, it } from "@effect/vitest"
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import * as Either from "effect/Either"
import { fromLangChain, toLangChain } from "../src/adapters/langchain.js"

const roundTrip = (messages: ReadonlyArray<HumanMessage | AIMessage | ToolMessage>) => {
  const inward = fromLangChain(messages)
  if (Either.isLeft(inward)) throw new Error(inward.left.message)
  const outward = toLangChain(inward.right)
  if (Either.isLeft(outward)) throw new Error(outward.left.message)
  return { inward: inward.right, outward: outward.right }
}

describe("fromLangChain / toLangChain keep what LangChain gave", () => {
  it("ChatAnthropic's answer (thinking and a tool_use block in content, the call in tool_calls too) comes back as it was", () => {
    // What @langchain/anthropic 1.5 returns for a thinking + tool_use answer; before the fix the next
    // model call of a LangGraph agent on ChatAnthropic failed ("unsupported content block tool_use").
    const messages = [
      new HumanMessage({ id: "h1", content: "Why does the build fail?" }),
      new AIMessage({
        id: "msg_1",
        content: [
          { type: "thinking", thinking: "Read the build file first.", signature: "Eq4CCpIB" },
          {
            type: "tool_use",
            id: "toolu_1",
            name: "read_file",
            input: { path: "src/build.ts" },
            caller: { type: "direct" }
          }
        ],
        tool_calls: [{ type: "tool_call", id: "toolu_1", name: "read_file", args: { path: "src/build.ts" } }]
      }),
      new ToolMessage({ id: "t1", tool_call_id: "toolu_1", content: "export const build = () => config" })
    ]
    const { inward, outward } = roundTrip(messages)
    // One call, in its place after the thinking (not twice).
    expect(inward[1]?.parts.map((part) => part.type)).toEqual(["reasoning", "tool_call"])
    expect(outward).toEqual(messages)
  })

  it("a name, provider metadata, usage, an artifact, block fields and the content form come back in place", () => {
    const messages = [
      new HumanMessage({
        id: "h1",
        name: "alice",
        content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }]
      }),
      // `@langchain/core` 1.4 types `usage_metadata` of the default message structure as `undefined`.
      new AIMessage({
        id: "a1",
        name: "helper",
        content: [{ type: "text", text: "calling" }],
        tool_calls: [{ type: "tool_call", id: "c1", name: "lookup", args: { q: "x" } }],
        additional_kwargs: { refusal: null, trace: { turn: 1 } },
        response_metadata: { model_name: "gpt-4o", finish_reason: "tool_calls" },
        usage_metadata: { input_tokens: 10, output_tokens: 2, total_tokens: 12 }
      } as ConstructorParameters<typeof AIMessage>[0] & object),
      new ToolMessage({ id: "t1", name: "lookup", tool_call_id: "c1", content: "found", artifact: { rows: [1, 2] } })
    ]
    const { inward, outward } = roundTrip(messages)
    expect(inward.map((message) => message.name)).toEqual(["alice", "helper", "lookup"])
    expect(inward[1]?.providerOptions?.langchain).toMatchObject({
      additional_kwargs: { refusal: null, trace: { turn: 1 } },
      response_metadata: { model_name: "gpt-4o" }
    })
    expect(inward[0]?.parts[0]?.providerOptions).toEqual({
      langchain: { block: { cache_control: { type: "ephemeral" } } }
    })
    expect(outward).toEqual(messages)
    expect(outward.map((message) => message.toDict())).toEqual(messages.map((message) => message.toDict()))
  })

  it("a field that is not JSON is refused by name, not dropped", () => {
    const odd = new AIMessage({ id: "a1", content: "x", additional_kwargs: { when: new Date(0) } })
    const result = fromLangChain([odd])
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(result.left.message).toContain("additional_kwargs")
    const block = new HumanMessage({ content: [{ type: "text", text: "x", big: 10n }] })
    const refused = fromLangChain([block])
    expect(Either.isLeft(refused)).toBe(true)
    if (Either.isLeft(refused)) expect(refused.left.message).toContain("content[0]")
  })
})
