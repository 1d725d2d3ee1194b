import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { createContext, CtxlogError, Message } from "../src/index.js"

const tempFile = () => join(mkdtempSync(join(tmpdir(), "ctxlog-client-")), "agent.db")

const round = (index: number) => [
  Message.user(`Question ${index}: why does step ${index} of the build fail?`),
  Message.assistant(`Let me look at step ${index}.`, [Message.toolCall(`call-${index}`, "read_file", { step: index })]),
  Message.tool(`call-${index}`, `step ${index} output: ${"lorem ipsum ".repeat(40)}`),
  Message.assistant(`Step ${index} fails because of a missing import.`)
]

describe("createContext (Promise API)", () => {
  it("runs the turn module on a SQLite file: every render is recorded and rebuilds from the log", async () => {
    const filename = tempFile()
    const ctx = await createContext({ sqlite: filename })
    const policy = {
      builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 4096, maxOutputTokens: 512 },
      render: { turnReminder: "Be brief." },
      compaction: {}
    } as const
    const turn = ctx.turn("chat-turn", policy)
    for (const index of [1, 2, 3, 4, 5, 6]) {
      await turn.prepare([Message.user(`Question ${index}: why does step ${index} fail?`)])
      const first = await turn.render()
      expect(JSON.parse(first.body)).toMatchObject({ model: "claude-sonnet-4-5" })
      await turn.complete({
        answer: [
          Message.text(`Looking at step ${index}.`),
          Message.toolCall(`call-${index}`, "read_file", { step: index })
        ],
        results: [Message.toolResult(`call-${index}`, `step ${index}: ${"lorem ipsum ".repeat(200)}`)],
        endTurn: false
      })
      await turn.render({ iteration: 1 })
      const done = await turn.complete({ answer: [Message.text("A missing import.")], endTurn: true })
      expect(done.events).toBeGreaterThan(0)
    }
    await ctx.close()
    const verify = await import("@ctxlog/providers").then(async ({ RenderRecord }) => {
      const { Ctxlog } = await import("@ctxlog/memory")
      const { EventLog } = await import("@ctxlog/core")
      const Effect = await import("effect/Effect")
      const Stream = await import("effect/Stream")
      const Chunk = await import("effect/Chunk")
      const program = Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read("chat-turn")))
      const events = await Effect.runPromise(
        Effect.scoped(Effect.provide(program, Ctxlog.sqlite({ filename, create: false })))
      )
      return RenderRecord.verifyAll(Chunk.toReadonlyArray(events))
    })
    expect(verify.renders).toBe(12)
    expect(verify.failures).toEqual([])
    expect(verify.overWindow).toEqual([])
  })

  it("refuses a policy whose window cannot hold a prompt, naming the field", async () => {
    const ctx = await createContext({ memory: true })
    expect(() =>
      ctx.turn("chat-1", {
        builder: { provider: "openai", model: "gpt-4o", contextWindow: 4096, maxOutputTokens: 4000 }
      })
    ).toThrow(/builder\.contextWindow/)
    await ctx.close()
  })

  it("appends, renders for OpenAI, and a reopened context loads the same window", async () => {
    const filename = tempFile()
    const ctx = await createContext({ sqlite: filename })
    const window = await ctx.append("chat-1", round(1))
    expect(window.history).toHaveLength(4)
    const request = await ctx.render("chat-1", { provider: "openai", model: "gpt-4o" })
    expect(request).toMatchObject({ model: "gpt-4o" })
    expect(JSON.stringify(request)).toContain("call-1")
    await ctx.close()

    const reopened = await createContext({ sqlite: filename, create: false })
    const loaded = await reopened.load("chat-1")
    expect(loaded.history.map((message) => message.id)).toEqual(window.history.map((message) => message.id))
    expect(await reopened.render("chat-1", { provider: "openai", model: "gpt-4o" })).toEqual(request)
    await reopened.close()
  })

  it("trims to a budget and compacts with the default summarizer and with a custom one", async () => {
    const ctx = await createContext({ memory: true })
    for (const index of [1, 2, 3, 4]) await ctx.append("chat-1", round(index))
    const full = await ctx.load("chat-1")
    const trimmed = await ctx.trim("chat-1", Math.floor(full.tokens.total / 2))
    expect(trimmed.tokens.total).toBeLessThanOrEqual(Math.floor(full.tokens.total / 2))
    expect(trimmed.history.length).toBeLessThan(full.history.length)

    const compacted = await ctx.compact("chat-1", { keepTokens: 0 })
    expect(compacted.compacted).toBe(true)
    expect(compacted.window.history.length).toBeLessThan(trimmed.history.length)
    await ctx.close()

    const seen: Array<number> = []
    const custom = await createContext({
      memory: true,
      summarizer: {
        name: "test",
        summarize: async (input) => {
          seen.push(input.messages.length)
          return "the build failed on missing imports"
        }
      }
    })
    for (const index of [1, 2]) await custom.append("chat-1", round(index))
    const result = await custom.compact("chat-1", { keepTokens: 0 })
    expect(result.compacted).toBe(true)
    expect(seen.length).toBe(1)
    expect(JSON.stringify(result.window)).toContain("the build failed on missing imports")
    await custom.close()
  })

  it("rejects with CtxlogError carrying the typed error's tag", async () => {
    const missing = tempFile()
    const opened = createContext({ sqlite: missing, create: false })
    await expect(opened).rejects.toBeInstanceOf(CtxlogError)
    await expect(opened).rejects.toMatchObject({ _tag: "DatabaseNotFound" })
    await expect(opened).rejects.toThrow(missing)

    const ctx = await createContext({ memory: true })
    // A tool result answering no call: the command is refused and nothing is written.
    const error = await ctx
      .append("chat-2", [Message.user("hi"), Message.tool("nope", "orphan output")])
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CtxlogError)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({ _tag: "InvalidCommand" })
    expect((await ctx.load("chat-2")).version).toBe(0)
    await ctx.close()

    // What a plain-JavaScript caller can pass despite the types.
    const both: Parameters<typeof createContext>[0] = JSON.parse(JSON.stringify({ sqlite: missing, memory: true }))
    await expect(createContext(both)).rejects.toMatchObject({
      _tag: "InvalidOptions"
    })
  })
  it("refuses a BigInt, a circular object and a 10,000-deep array in tool-call arguments with EventEncodeError naming the path, writing nothing", async () => {
    const circular: { [key: string]: unknown } = { a: 1 }
    circular.self = circular
    let deep: unknown = "bottom"
    for (let level = 0; level < 10_000; level += 1) deep = [deep]
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ n: 1n }, "messages.1.parts.0.input.n"],
      [circular, "messages.1.parts.0.input.self"],
      [deep, "messages.1.parts.0.input"]
    ]
    const ctx = await createContext({ memory: true })
    for (const [input, path] of cases) {
      // What a plain-JavaScript caller can pass despite the types.
      const call = { role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "run", input }] }
      const error = await ctx
        .append("hostile", [Message.user("run it"), call as unknown as Parameters<typeof ctx.append>[1][number]])
        .catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(CtxlogError)
      expect(error).toMatchObject({ _tag: "EventEncodeError" })
      expect(error).toHaveProperty("cause.index", 1)
      expect(error).toHaveProperty("message", expect.stringContaining(`at "${path}`))
      expect((await ctx.load("hostile")).version).toBe(0)
    }
    await ctx.close()
  })
})
