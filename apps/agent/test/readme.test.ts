// What the READMEs say about the demo is what the demo does: the turn at which the bug is fixed.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import * as Demo from "../src/Demo.js"
import * as Ui from "../src/Ui.js"
import { agentDir } from "./support/cli.js"

describe("the READMEs and the demo", () => {
  it("name the turn of the plan at which the bug is fixed, and the number of turns", () => {
    const plan = Demo.planFor(Demo.sampleDir)
    const fixAt = plan.findIndex((turn) => turn.user === "Now fix the discount bug.") + 1
    assert.isAbove(fixAt, 0)
    for (const file of [join(agentDir, "README.md"), join(agentDir, "..", "..", "README.md")]) {
      const claim = /turn (\d+) of (\d+) the (?:model|agent) fixes the bug/.exec(readFileSync(file, "utf8"))
      assert.isNotNull(claim, `${file} says at which turn the bug is fixed`)
      assert.strictEqual(Number(claim?.[1]), fixAt, file)
      assert.strictEqual(Number(claim?.[2]), plan.length, file)
    }
  })
})

describe("folded input", () => {
  it("shows a long paste as its first lines, how many are left out, and its last line", () => {
    const paste = Array.from({ length: 160 }, (_, index) => `line ${index + 1}`).join("\n")
    assert.strictEqual(
      Ui.fold(`Here is the log:\n${paste}`),
      `Here is the log:\nline 1\nline 2\n  … 157 more lines (${paste.length + 17} characters in all) …\nline 160`
    )
  })

  it("shows short text whole", () => {
    assert.strictEqual(Ui.fold("one\ntwo\nthree\nfour\nfive"), "one\ntwo\nthree\nfour\nfive")
    assert.strictEqual(Ui.fold("single"), "single")
  })
})
