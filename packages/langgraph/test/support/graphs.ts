/**
 * Small real LangGraph graphs for the saver's tests: no model, the nodes answer deterministically.
 */
import { EventLog, type WindowEvent } from "@ctxlog/core"
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { Annotation, END, MessagesAnnotation, messagesStateReducer, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { CtxlogSaver } from "../../src/index.js"

/** A turn of a tool-using agent: the model asks for a tool, the tool answers. */
export const agentGraph = (checkpointer: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("agent", (state) => {
      const turn = state.messages.length
      return {
        messages: [
          new AIMessage({
            id: `ai-${turn}`,
            content: [{ type: "text", text: `calling the tool (turn ${turn})` }],
            tool_calls: [
              { id: `call-${turn}`, name: "lookup", args: { query: `q${turn}`, page: 1 }, type: "tool_call" }
            ],
            additional_kwargs: { trace: { turn, tags: ["a", "b"] } },
            response_metadata: { model: "fake", finish_reason: "tool_calls", usage: { input_tokens: 10 + turn } }
          })
        ]
      }
    })
    .addNode("tools", (state) => {
      const last = state.messages[state.messages.length - 1]
      const call = last instanceof AIMessage ? last.tool_calls?.[0] : undefined
      return {
        messages: [
          new ToolMessage({
            id: `tool-${state.messages.length}`,
            tool_call_id: call?.id ?? "none",
            content: `result for ${JSON.stringify(call?.args ?? {})}`,
            artifact: { rows: [1, 2, 3] }
          })
        ]
      }
    })
    .addEdge(START, "agent")
    .addEdge("agent", "tools")
    .addEdge("tools", END)
    .compile({ checkpointer })

/** A state with a messages channel and two other channels, of which a node changes only one. */
export const WideState = Annotation.Root({
  messages: Annotation<Array<BaseMessage>>({ reducer: messagesStateReducer, default: () => [] }),
  steps: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  settings: Annotation<{ readonly model: string }>()
})

/** Two nodes that append a message and count a step each; `settings` is only ever set by the input. */
export const wideGraph = (checkpointer: BaseCheckpointSaver) =>
  new StateGraph(WideState)
    .addNode("first", (state) => ({
      messages: [new AIMessage({ id: `first-${state.messages.length}`, content: "first" })],
      steps: 1
    }))
    .addNode("second", (state) => ({
      messages: [new AIMessage({ id: `second-${state.messages.length}`, content: "second" })],
      steps: 1
    }))
    .addEdge(START, "first")
    .addEdge("first", "second")
    .addEdge("second", END)
    .compile({ checkpointer })

/** `count` user/assistant messages with ids. */
export const history = (count: number, from = 0): Array<BaseMessage> =>
  Array.from({ length: count }, (_, index) =>
    (from + index) % 2 === 0
      ? new HumanMessage({ id: `h-${from + index}`, content: `question ${from + index}: ${"lorem ipsum ".repeat(8)}` })
      : new AIMessage({ id: `a-${from + index}`, content: `answer ${from + index}: ${"dolor sit amet ".repeat(8)}` })
  )

/** Every event of a stream, through the saver's own log. */
export const eventsOf = (saver: CtxlogSaver, stream: string): Promise<ReadonlyArray<WindowEvent.WindowEvent>> =>
  saver.runtime.runPromise(
    Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read(stream))).pipe(
      Effect.map((chunk) => Chunk.toReadonlyArray(chunk).map((envelope) => envelope.event))
    )
  )

/** The `CheckpointSaved` events of a stream. */
export const checkpointsOf = async (saver: CtxlogSaver, stream: string) =>
  (await eventsOf(saver, stream)).filter(
    (event): event is WindowEvent.EventOf<"CheckpointSaved"> => event._tag === "CheckpointSaved"
  )
