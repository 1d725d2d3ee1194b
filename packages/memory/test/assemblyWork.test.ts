import { Message, Window, type WindowEvent } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import { held, work } from "../src/internal/assembly.js"

// The recall's dedupe reads what the window holds on every prepare: it must cost the new messages,
// not the window (messages are immutable; a held window keeps the same message objects).
const appended = (index: number): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `event-${index}`,
  message: {
    id: `message-${index}`,
    role: index % 2 === 0 ? "user" : "assistant",
    kind: "chat",
    parts: [Message.text(`Message ${index}: the build failed at step ${index}.`)],
    tokens: 12
  }
})

describe("recall dedupe work", () => {
  for (const size of [1000, 10_000]) {
    it(`normalizes each message once, not the window, at ${size} messages`, () => {
      let window = Window.replay(Array.from({ length: size }, (_, index) => appended(index)))
      const none = new Set<Message.MessageKind>()
      work.textsNormalized = 0
      work.messagesIndexed = 0
      const first = held(window, none)
      assert.strictEqual(work.textsNormalized, size)
      assert.strictEqual(work.messagesIndexed, size)
      assert.isTrue(first.texts.has(`message ${size - 1}: the build failed at step ${size - 1}.`))
      assert.isTrue(first.ids.has("message-0"))
      for (let turn = 0; turn < 3; turn++) {
        const newest = size + 2 * turn + 1
        window = Window.evolve(Window.evolve(window, appended(newest - 1)), appended(newest))
        work.textsNormalized = 0
        work.messagesIndexed = 0
        const next = held(window, none)
        // Only the two new messages: normalized once, indexed once.
        assert.strictEqual(work.textsNormalized, 2)
        assert.strictEqual(work.messagesIndexed, 2)
        assert.isTrue(next.ids.has(`message-${newest}`))
        assert.isTrue(next.texts.has(`message ${newest}: the build failed at step ${newest}.`))
        // A view handed out before stays true for its own window after the index grew.
        assert.isFalse(first.ids.has(`message-${newest}`))
        assert.isFalse(first.texts.has(`message ${newest}: the build failed at step ${newest}.`))
      }
      // A window whose history is not an extension (a trim) is indexed again, and stays exact.
      const trimmed = Window.evolve(window, {
        _tag: "HistoryTrimmed",
        id: `trim-${size}`,
        budget: 1000,
        removedIds: ["message-0", "message-1"]
      })
      const again = held(trimmed, none)
      assert.isFalse(again.ids.has("message-0"))
      assert.isTrue(again.ids.has("message-2"))
      assert.isFalse(again.texts.has("message 1: the build failed at step 1."))
    })
  }
})
