/**
 * What the span of a turn's model call carries that only the turn knows: the conversation (the
 * stream), the render's provenance (its `PromptRendered` event, hash, and every window element with
 * its source event, kind, reason and tokens), the request's parameters, and for opt-in content
 * capture the messages sent. Every caller of the turn module (the agent, the Promise API and the
 * framework integrations through it) describes its call with {@link callOf}; the span itself is
 * `Tracing.modelCall` / `Tracing.modelStream` (`@ctxlog/core`), whose attributes `GenAi` builds.
 *
 * @since 0.8.0
 */
import { type EventLog, GenAi, type Message, Tracing, type Window, type WindowEvent } from "@ctxlog/core"
import type * as Effect from "effect/Effect"

/** A render as the turn returned it (its window and events, and the request it built). @since 0.8.0 */
export interface RenderedCall {
  readonly window: Window.Window
  readonly events: ReadonlyArray<WindowEvent.WindowEvent>
  readonly built: { readonly request: unknown }
}

/**
 * The history messages holding tool results appended after the last answer: the results this call
 * shows the model for the first time. O(history after the last answer).
 */
const freshResults = (history: ReadonlyArray<Message.Message>): ReadonlySet<string> => {
  const ids = new Set<string>()
  for (let at = history.length - 1; at >= 0; at--) {
    const message = history[at]
    if (message === undefined || message.role === "assistant") break
    if (message.role === "tool") ids.add(message.id)
  }
  return ids
}

/** The description of the model call that sends a render. @since 0.8.0 */
export const callOf = (stream: EventLog.StreamId, rendered: RenderedCall): Tracing.Call => {
  const window = rendered.window
  return {
    conversationId: stream,
    provenance: GenAi.provenanceOfRender(window, rendered.events, freshResults(window.history)),
    parameters: GenAi.parametersOf(rendered.built.request),
    input: [...window.knowledge, ...window.history],
    system: window.system.map((message) =>
      message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
    )
  }
}

/** Run the model call that sends `rendered` (a provider's `stream` / `generate`) with its span described. @since 0.8.0 */
export const traced =
  (stream: EventLog.StreamId, rendered: RenderedCall) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Tracing.withCall(callOf(stream, rendered))(self)
