/**
 * The bench's graph (`bench/src/langgraphDelta.ts`), for tests that count what a turn writes: the input,
 * then one node; a turn appends a tool call and its result. Plain (`MessagesAnnotation`) or `DeltaChannel`
 * (`MessagesDeltaValue`).
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages"
import { MessagesAnnotation, MessagesDeltaValue, START, StateGraph, StateSchema } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"

/** The thread a turn runs on. */
export interface ThreadConfig {
  readonly configurable: { readonly thread_id: string }
}

/** What a turn uses of a compiled graph (the plain and the DeltaChannel graphs differ in their types only). */
export interface TurnGraph {
  readonly invoke: (input: { messages: Array<BaseMessage> }, options: ThreadConfig) => Promise<unknown>
  readonly getState: (options: ThreadConfig) => Promise<{ values: { messages: ReadonlyArray<unknown> } }>
}

/** The graph on `saver`: one node after the input, a turn is one `invoke`. */
export const graphOf = (saver: BaseCheckpointSaver, delta: boolean): TurnGraph =>
  delta
    ? new StateGraph(new StateSchema({ messages: MessagesDeltaValue }))
        .addNode("agent", () => ({}))
        .addEdge(START, "agent")
        .compile({ checkpointer: saver })
    : new StateGraph(MessagesAnnotation)
        .addNode("agent", () => ({}))
        .addEdge(START, "agent")
        .compile({ checkpointer: saver })

/** Turn `turn`'s input: a tool call and its result, the result's text repeated `repeat` times (~22 bytes each). */
export const turnInput = (turn: number, repeat: number) => ({
  messages: [
    new AIMessage({
      id: `call-${turn}`,
      content: "",
      tool_calls: [{ type: "tool_call", id: `c${turn}`, name: "read", args: { path: `f${turn}.ts` } }]
    }),
    new ToolMessage({
      id: `result-${turn}`,
      tool_call_id: `c${turn}`,
      content: `contents of f${turn}.ts `.repeat(repeat)
    })
  ]
})
