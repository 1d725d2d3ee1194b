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
      const first = held(window, none)
      assert.strictEqual(work.textsNormalized, size)
      assert.strictEqual(first.texts.size, size)
      assert.isTrue(first.texts.has(`message ${size - 1}: the build failed at step ${size - 1}.`))
      for (let turn = 0; turn < 3; turn++) {
        window = Window.evolve(Window.evolve(window, appended(size + 2 * turn)), appended(size + 2 * turn + 1))
        work.textsNormalized = 0
        const next = held(window, none)
        assert.strictEqual(work.textsNormalized, 2)
        assert.strictEqual(next.ids.size, size + 2 * turn + 2)
        assert.isTrue(next.ids.has(`message-${size + 2 * turn + 1}`))
      }
    })
  }
})
