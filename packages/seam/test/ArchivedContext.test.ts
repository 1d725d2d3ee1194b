import { Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ArchivedContext } from "../src/index.js"

const message = (id: string, role: Message.Role, body: string): Message.Message => ({
  id,
  role,
  kind: "chat",
  parts: [Message.text(body)],
  tokens: 1
})

describe("ArchivedContext", () => {
  it("renders a block that parses back to its level, attributes and body", () => {
    const text = ArchivedContext.render(2, "  goal: ship it\nfiles: a.ts ", { workspace: '/repo "x" <y>' })
    assert.isTrue(text.startsWith('<archived_context level="2" workspace="/repo &quot;x&quot; &lt;y&gt;">'))
    assert.deepStrictEqual(ArchivedContext.parse(text), [
      { level: 2, attributes: { workspace: '/repo "x" <y>' }, body: "goal: ship it\nfiles: a.ts" }
    ])
  })

  it("escapes a body that quotes a block so it cannot close the outer one", () => {
    const inner = ArchivedContext.render(1, "old")
    const outer = ArchivedContext.render(2, `before ${inner} after`)
    const blocks = ArchivedContext.parse(outer)
    assert.strictEqual(blocks.length, 1)
    assert.strictEqual(blocks[0]?.level, 2)
    assert.include(blocks[0]?.body ?? "", "after")
  })

  it.effect("collects blocks from assistant messages only, in order", () =>
    Effect.sync(() => {
      const texts = ArchivedContext.collect([
        message("a", "assistant", `x ${ArchivedContext.render(1, "first")} y ${ArchivedContext.render(2, "second")}`),
        message("u", "user", ArchivedContext.render(3, "a user quoting a block")),
        message("b", "assistant", "no block here"),
        message("c", "assistant", '<archived_context level="x">bad level</archived_context>'),
        message("d", "assistant", ArchivedContext.render(3, "third"))
      ])
      assert.deepStrictEqual(
        texts.map((text) => [text.messageId, text.level, text.body]),
        [
          ["a", 1, "first"],
          ["a", 2, "second"],
          ["d", 3, "third"]
        ]
      )
    })
  )
})
