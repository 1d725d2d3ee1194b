// Where a LangGraph turn's bytes go: WAL frames (pages) per transaction of CtxlogSaver and of LangGraph's
// SqliteSaver, plain messages and DeltaChannel. Not part of `pnpm bench`; run by hand:
// node --conditions=@ctxlog/source --import tsx src/profileSaverPages.ts
import { statSync } from "node:fs"
import { join } from "node:path"
import { CtxlogSaver } from "@ctxlog/langgraph"
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { MessagesAnnotation, MessagesDeltaValue, START, StateGraph, StateSchema } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import BetterSqlite3 from "better-sqlite3"
import { prose, tempDir } from "./stores.js"

const dir = tempDir("saver-pages")
const config = { configurable: { thread_id: "t" } }
const walFrames = (file: string): number => {
  try {
    return Math.round(statSync(`${file}-wal`).size / (4096 + 24))
  } catch {
    return 0
  }
}
const truncate = (file: string) => {
  const db = new BetterSqlite3(file)
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
}
for (const [name, delta, make] of [
  ["CtxlogSaver plain", false, (f: string) => new CtxlogSaver({ sqlite: f })],
  ["CtxlogSaver delta", true, (f: string) => new CtxlogSaver({ sqlite: f })],
  ["SqliteSaver plain", false, (f: string) => SqliteSaver.fromConnString(f)],
  ["SqliteSaver delta", true, (f: string) => SqliteSaver.fromConnString(f)]
] as const) {
  const file = join(dir, `${name.replace(/ /g, "-")}.db`)
  const saver: BaseCheckpointSaver = make(file)
  let puts = 0
  let writes = 0
  const put = saver.put.bind(saver)
  const putWrites = saver.putWrites.bind(saver)
  saver.put = (...args) => {
    puts += 1
    return put(...args)
  }
  saver.putWrites = (...args) => {
    writes += 1
    return putWrites(...args)
  }
  const schema = delta ? new StateSchema({ messages: MessagesDeltaValue }) : MessagesAnnotation
  // biome-ignore lint/suspicious/noExplicitAny: the two schemas differ in type only
  const graph = new StateGraph(schema as any)
    .addNode("agent", () => ({}))
    .addEdge(START, "agent")
    .compile({ checkpointer: saver })
  await graph.invoke({ messages: [new HumanMessage({ id: "h", content: prose(300, 1) })] }, config)
  truncate(file)
  puts = 0
  writes = 0
  const turns = 10
  for (let t = 0; t < turns; t++) {
    await graph.invoke(
      {
        messages: [
          new AIMessage({
            id: `a${t}`,
            content: "",
            tool_calls: [{ type: "tool_call", id: `c${t}`, name: "read", args: { path: "x" } }]
          }),
          new ToolMessage({ id: `r${t}`, content: prose(2000, t), tool_call_id: `c${t}` })
        ]
      },
      config
    )
  }
  console.log(
    `${name}: per turn ${(puts / turns).toFixed(1)} put + ${(writes / turns).toFixed(1)} putWrites, ${(walFrames(file) / turns).toFixed(1)} WAL pages (${((walFrames(file) * 4120) / 1024 / turns).toFixed(1)} KiB)`
  )
  if (saver instanceof CtxlogSaver) await saver.close()
  else if (saver instanceof SqliteSaver) saver.db.close()
}
