/**
 * The context window: a projection of a stream of {@link WindowEvent}s.
 *
 * Four partitions line up with the slots of an LLM API: `system` (identity and rules), `knowledge`
 * (stable knowledge first, then injected context such as recall), `taskState` + `signals` (goal,
 * subgoals; ephemeral notes cleared after each render), and `history` (turns, tool calls and results:
 * the compression target).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as evolveInternal from "./internal/evolve.js"
import type { Message } from "./Message.js"
import type { WindowEvent } from "./WindowEvent.js"

export {
  Calibration,
  CompactionState,
  DeferredSummary,
  SeamRef,
  Signal,
  TaskState,
  Tokens,
  Window
} from "./internal/windowSchemas.js"
export type { MessagePartition } from "./internal/windowSchemas.js"
import { Window } from "./internal/windowSchemas.js"

/** The window before any event. @since 0.1.0 */
export const empty: Window = evolveInternal.empty

/**
 * Fold one event into the window. Pure and total: no clock, no randomness, no I/O.
 * @since 0.1.0
 */
export const evolve: (window: Window, event: WindowEvent) => Window = evolveInternal.evolve

/** Fold events, in order, from `from` (the empty window by default). @since 0.1.0 */
export const replay = (events: Iterable<WindowEvent>, from: Window = empty): Window =>
  evolveInternal.replay(events, from)

/** Every message in render order: system, knowledge, history. @since 0.1.0 */
export const messages = (window: Window): ReadonlyArray<Message> => [
  ...window.system,
  ...window.knowledge,
  ...window.history
]

/** Find a message anywhere in the window (history by its index: O(log n)). @since 0.1.0 */
export const findMessage = (window: Window, id: string): Message | undefined =>
  window.system.find((message) => message.id === id) ??
  window.knowledge.find((message) => message.id === id) ??
  evolveInternal.stateOf(window).history.get(id)

/** The highest seam level present, if any. @since 0.1.0 */
export const highestSeamLevel = (window: Window): number | undefined =>
  window.seams.length === 0 ? undefined : Math.max(...window.seams.map((seam) => seam.level))

/**
 * The ratio reported/estimated prompt tokens observed so far (1 before any usage was reported).
 * Multiply a local estimate by it to correct for a model with no local tokenizer.
 * @since 0.1.0
 */
export const calibrationRatio = (window: Window): number =>
  window.calibration.estimatedInputTokens > 0 && window.calibration.reportedInputTokens > 0
    ? window.calibration.reportedInputTokens / window.calibration.estimatedInputTokens
    : 1

/** Decode an unknown value (for example a stored snapshot) into a Window. @since 0.1.0 */
export const decodeUnknown = Schema.decodeUnknown(Window)
/** Encode a window to its JSON shape. @since 0.1.0 */
export const encode = Schema.encode(Window)
