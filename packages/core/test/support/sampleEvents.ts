/** `count` MessageAppended events with fresh UUIDv7 ids (the same helper `@ctxlog/testing` exports). */
import { v7 as uuidv7 } from "uuid"
import type { WindowEvent } from "../../src/WindowEvent.js"

export const sampleEvents = (count: number, note = "hello"): ReadonlyArray<WindowEvent> =>
  Array.from({ length: count }, (_, index) => {
    const id = uuidv7()
    return {
      _tag: "MessageAppended",
      id,
      message: {
        id: `m-${id}`,
        role: index % 2 === 0 ? "user" : "assistant",
        kind: "chat",
        parts: [{ type: "text", text: `${note} ${index}` }],
        tokens: 3
      }
    }
  })
