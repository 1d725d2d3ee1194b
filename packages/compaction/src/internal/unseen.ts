/** Which tool results the model has not seen yet: the window's own account (`Window.unseenToolResults`). */
import { Window } from "@ctxlog/core"

/**
 * Tool call ids whose results the model has not seen yet: results appended after the last render and
 * the last assistant message (core tracks them per event; see `Window.unseenToolResults`).
 */
export const unseenToolCallIds = (window: Window.Window): ReadonlySet<string> => Window.unseenToolCallIds(window)

/** Ids of the history messages that hold a tool result the model has not seen yet. */
export const unseenMessageIds = (window: Window.Window): ReadonlySet<string> =>
  new Set(Window.unseenToolResults(window))
