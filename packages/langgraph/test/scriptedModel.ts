import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createContext } from "@ctxlog/client"
import { EventLog, type Window, type WindowEvent } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import { BaseChatModel } from "@langchain/core/language_models/chat_models"
import { AIMessage, type BaseMessage } from "@langchain/core/messages"
import type { ChatResult } from "@langchain/core/outputs"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** A fresh SQLite file in a temporary directory. */
export const tempDb = (): string => join(mkdtempSync(join(tmpdir(), "ctxlog-langgraph-")), "agent.db")

/**
 * A chat model answering from a script (one answer per call, or a function of the call's number) and
 * keeping every prompt it received: what the agent sent, after the pre-model hook.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly prompts: Array<ReadonlyArray<BaseMessage>> = []
  constructor(private readonly answer: (call: number, prompt: ReadonlyArray<BaseMessage>) => AIMessage) {
    super({})
  }
  _llmType(): string {
    return "scripted"
  }
  // The agent binds its tools; the script already knows which it calls.
  override bindTools(): this {
    return this
  }
  async _generate(messages: Array<BaseMessage>): Promise<ChatResult> {
    this.prompts.push(messages)
    const message = this.answer(this.prompts.length - 1, messages)
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] }
  }
}

/** An answer with the usage a provider would report (`usage_metadata`). */
/**
 * An answer with the usage a provider would report. The usage goes in the constructor's fields (the
 * checkpointer serializes a message by them); `@langchain/core` 1.4 types that field of the default
 * message structure as `undefined`, hence the widened fields type.
 */
const answer = (fields: { content: string; tool_calls?: AIMessage["tool_calls"] }, input: number, output: number) =>
  new AIMessage({
    ...fields,
    usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output }
  } as ConstructorParameters<typeof AIMessage>[0] & object)

/** A scripted answer calling one tool. */
export const callTool = (id: string, name: string, args: Record<string, string>) =>
  answer({ content: "", tool_calls: [{ type: "tool_call", id, name, args }] }, 120, 20)

/** A scripted text answer. */
export const say = (text: string) => answer({ content: text }, 100, 10)

/** Every event of a stream, read back from the file, and what `RenderRecord.verifyAll` says of its renders. */
export interface ReadBack {
  readonly events: ReadonlyArray<{ readonly event: WindowEvent.WindowEvent; readonly version: number }>
  readonly window: Window.Window
  readonly count: (tag: WindowEvent.WindowEvent["_tag"]) => number
  readonly verification: RenderRecord.Verification
}

export const readBack = async (filename: string, stream: string): Promise<ReadBack> => {
  const ctx = await createContext({ sqlite: filename, create: false })
  try {
    const events = Chunk.toReadonlyArray(
      await ctx.runtime.runPromise(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read(stream))))
    )
    const window = await ctx.load(stream)
    const count = (tag: WindowEvent.WindowEvent["_tag"]) => events.filter((stored) => stored.event._tag === tag).length
    return { events, window, count, verification: RenderRecord.verifyAll(events) }
  } finally {
    await ctx.close()
  }
}
