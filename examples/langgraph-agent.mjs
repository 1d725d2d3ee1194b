// A LangGraph ReAct agent (`createReactAgent`) on the ctxlog event log: `CtxlogSaver` keeps the graph's
// state, `ctxlogPreModelHook` runs the turn module before every model call (compaction, the fit to the
// window, a recorded render) and its `postModelHook` records each final answer. The model is a small offline chat model that reads a file when asked and
// then answers from it. The first process asks a question and exits; a second process reopens the same
// database, resumes the thread from its checkpoint and asks a follow-up. Then the log is checked (every
// render rebuilds) and the `pnpm ctxlog` commands that inspect it are printed.
// Run: node examples/langgraph-agent.mjs   (after `pnpm build`; needs better-sqlite3 installed)
import { execFileSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createContext } from "@ctxlog/client"
import { EventLog } from "@ctxlog/core"
import { CtxlogSaver, ctxlogPreModelHook } from "@ctxlog/langgraph"
import { RenderRecord } from "@ctxlog/providers"
import { BaseChatModel } from "@langchain/core/language_models/chat_models"
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import { createReactAgent } from "@langchain/langgraph/prebuilt"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const thread = { configurable: { thread_id: "demo" } }

// An offline chat model: asked something, it reads the file the question names; given the file, it answers.
class OfflineChatModel extends BaseChatModel {
  calls = 0
  constructor() {
    super({})
  }
  _llmType() {
    return "offline"
  }
  bindTools() {
    return this
  }
  async _generate(messages) {
    this.calls++
    const last = messages.at(-1)
    console.log(`  model call ${this.calls}: received ${messages.map((message) => message.type).join(", ")}`)
    const message = ToolMessage.isInstance(last)
      ? new AIMessage({ content: `From the file: ${String(last.content).slice(0, 60)}` })
      : new AIMessage({
          content: "",
          tool_calls: [
            {
              type: "tool_call",
              id: `call_${Date.now()}`,
              name: "read_file",
              args: { path: String(last?.content).includes("test") ? "test/a.test.ts" : "src/a.ts" }
            }
          ]
        })
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] }
  }
}

const files = {
  "src/a.ts": "export const add = (a: number, b: number) => a + b",
  "test/a.test.ts": 'it("adds", () => expect(add(1, 2)).toBe(3))'
}
const readFile = tool(async ({ path }) => files[path] ?? `no such file: ${path}`, {
  name: "read_file",
  description: "Read a file of the project",
  schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
})

/** One process: open the checkpointer and the hook on the database, ask one question, close. */
const session = async (filename, question) => {
  const checkpointer = new CtxlogSaver({ sqlite: filename })
  const preModelHook = ctxlogPreModelHook({
    sqlite: filename,
    tools: [readFile],
    system: "You answer questions about the project from its files.",
    contextWindow: 16_000
  })
  const agent = createReactAgent({
    llm: new OfflineChatModel(),
    tools: [readFile],
    preModelHook,
    postModelHook: preModelHook.postModelHook,
    checkpointer
  })
  const before = await agent.getState(thread)
  console.log(`  the thread holds ${before.values.messages?.length ?? 0} messages before this run`)
  const state = await agent.invoke({ messages: [new HumanMessage(question)] }, thread)
  console.log(`  answer: ${state.messages.at(-1).content}`)
  await preModelHook.close()
  await checkpointer.close()
}

const [mode, filename, question] = process.argv.slice(2)
if (mode === "session") {
  await session(filename, question)
} else {
  const db = join(mkdtempSync(join(tmpdir(), "ctxlog-langgraph-")), "agent.db")
  const self = fileURLToPath(import.meta.url)
  // Two processes on one database: the second resumes the thread the first left.
  for (const [label, ask] of [
    ["process 1", "What does src/a.ts export?"],
    ["process 2 (restarted)", "Is there a test for it?"]
  ]) {
    console.log(`${label}: ${ask}`)
    execFileSync(process.execPath, [self, "session", db, ask], { stdio: "inherit" })
  }

  const ctx = await createContext({ sqlite: db, create: false })
  const model = "demo/model"
  const events = Chunk.toReadonlyArray(
    await ctx.runtime.runPromise(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read(model))))
  )
  const verification = RenderRecord.verifyAll(events)
  const graph = await ctx.load(CtxlogSaver.streamFor("demo"))
  const seen = await ctx.load(model)
  await ctx.close()
  console.log(
    `the thread's stream ${CtxlogSaver.streamFor("demo")}: ${graph.history.length} messages in its window;`,
    `the model's stream ${model}: ${verification.renders} renders, ${verification.verified} rebuilt to their recorded hash,`,
    `${verification.failures.length} failures, ${verification.overWindow.length} over the window;`,
    `${seen.history.length} messages in its window`
  )
  if (
    verification.renders !== 4 ||
    verification.verified !== 4 ||
    graph.history.length !== 8 ||
    seen.history.length !== 8
  ) {
    console.error("unexpected log contents")
    process.exit(1)
  }
  console.log("\ninspect it (from the repository root):")
  for (const command of [
    `pnpm ctxlog streams --db ${db}`,
    `pnpm ctxlog window ${CtxlogSaver.streamFor("demo")} --db ${db}`,
    `pnpm ctxlog blame ${CtxlogSaver.streamFor("demo")} --db ${db}`,
    `pnpm ctxlog events ${model} --db ${db}`,
    `pnpm ctxlog render ${model} --db ${db}`,
    `pnpm ctxlog verify ${model} --renders --db ${db}`,
    `pnpm ctxlog serve --db ${db}`
  ]) {
    console.log(`  ${command}`)
  }
}
