// The nearest session ids to a mistyped one, and the workspace a session records.
import { Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Sessions from "../src/Sessions.js"
import * as Workspace from "../src/Workspace.js"
import { agentDir } from "./support/cli.js"

describe("nearest session ids", () => {
  const ids = ["agent-20261125-101010-aaaaaa", "demo-20261125-101010-bbbbbb", "agent-20261124-090000-cccccc"]

  it("puts ids the given one is a prefix of first, then the closest by edit distance", () => {
    assert.deepStrictEqual(Sessions.nearest("demo-2026", ids, 1), ["demo-20261125-101010-bbbbbb"])
    assert.deepStrictEqual(Sessions.nearest("agent-20261124-090000-ccccce", ids, 2), [
      "agent-20261124-090000-cccccc",
      "agent-20261125-101010-aaaaaa"
    ])
    assert.deepStrictEqual(Sessions.nearest("x", [], 3), [])
  })

  it("counts insertions, deletions and substitutions", () => {
    assert.strictEqual(Sessions.editDistance("kitten", "sitting"), 3)
    assert.strictEqual(Sessions.editDistance("", "abc"), 3)
    assert.strictEqual(Sessions.editDistance("same", "same"), 0)
  })
})

describe("workspaces", () => {
  it("a recorded workspace is read back from the window's knowledge", () => {
    const window = Window.replay([])
    assert.isUndefined(Workspace.recorded(window))
    const note = Workspace.note("/home/me/project")
    assert.isTrue(note.startsWith("Workspace directory: /home/me/project\n"))
  })

  it("finds the ctxlog repository above a directory of it, and nothing above a temp directory", () => {
    const root = Workspace.repositoryOf(agentDir)
    assert.isDefined(root)
    assert.strictEqual(Workspace.repositoryOf(`${root}/packages/core/src`), root)
    assert.isUndefined(Workspace.repositoryOf("/tmp"))
  })
})
