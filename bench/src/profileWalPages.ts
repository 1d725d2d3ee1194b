// Which b-trees each transaction's WAL frames belong to: CtxlogSaver (plain and DeltaChannel graphs)
// and LangGraph's SqliteSaver, per turn of a tool call and its result. Not part of `pnpm bench`; run by hand:
// node --conditions=@ctxlog/source --import tsx src/profileWalPages.ts
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { CtxlogSaver } from "@ctxlog/langgraph"
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { MessagesAnnotation, MessagesDeltaValue, START, StateGraph, StateSchema } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import BetterSqlite3 from "better-sqlite3"
import { prose, tempDir } from "./stores.js"

const dir = tempDir("wal-pages")
const config = { configurable: { thread_id: "t" } }

/** Per commit, the pages it wrote, named by the b-tree (table or index) they belong to. */
const commits = (file: string): Array<Array<string>> => {
  const wal = readFileSync(`${file}-wal`)
  const pageSize = wal.readUInt32BE(8)
  const db = new BetterSqlite3(file, { readonly: true })
  const owner = new Map<number, string>()
  for (const row of db.prepare("select name, pageno from dbstat").all() as Array<{ name: string; pageno: number }>)
    owner.set(row.pageno, row.name)
  db.close()
  const out: Array<Array<string>> = []
  let current: Array<string> = []
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const page = wal.readUInt32BE(at)
    const commit = wal.readUInt32BE(at + 4)
    current.push(page === 1 ? "page1" : (owner.get(page) ?? `free/${page}`))
    if (commit !== 0) {
      out.push(current)
      current = []
    }
  }
  return out
}

const truncate = (file: string) => {
  const db = new BetterSqlite3(file)
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
}

const turns = Number(process.env.TURNS ?? 10)
const history = Number(process.env.HISTORY ?? 0)
for (const [name, delta, make] of [
  ["CtxlogSaver plain", false, (f: string) => new CtxlogSaver({ sqlite: f })],
  ["CtxlogSaver delta", true, (f: string) => new CtxlogSaver({ sqlite: f })],
  ["CtxlogSaver delta unmirrored", true, (f: string) => new CtxlogSaver({ sqlite: f, mirrorDeltaChannel: false })],
  ["SqliteSaver delta", true, (f: string) => SqliteSaver.fromConnString(f)]
] as const) {
  const file = join(dir, `${name.replace(/ /g, "-")}.db`)
  const saver: BaseCheckpointSaver = make(file)
  const schema = delta ? new StateSchema({ messages: MessagesDeltaValue }) : MessagesAnnotation
  // biome-ignore lint/suspicious/noExplicitAny: the two schemas differ in type only
  const graph = new StateGraph(schema as any)
    .addNode("agent", () => ({}))
    .addEdge(START, "agent")
    .compile({ checkpointer: saver })
  await graph.invoke({ messages: [new HumanMessage({ id: "h", content: prose(300, 1) })] }, config)
  const turn = async (t: number) =>
    graph.invoke(
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
  for (let t = 0; t < history; t++) await turn(-1 - t)
  truncate(file)
  for (let t = 0; t < turns; t++) await turn(t)
  const all = commits(file)
  const tally = new Map<string, number>()
  for (const c of all) for (const p of c) tally.set(p, (tally.get(p) ?? 0) + 1)
  console.log(
    `${name}: ${(all.length / turns).toFixed(1)} commits/turn, ${(all.flat().length / turns).toFixed(1)} pages/turn`
  )
  console.log(
    `  ${[...tally]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}=${(v / turns).toFixed(1)}`)
      .join(" ")}`
  )
  if (process.env.EACH) for (const c of all.slice(0, 5)) console.log(`  commit: ${c.join(" ")}`)
  if (saver instanceof CtxlogSaver) await saver.close()
  else if (saver instanceof SqliteSaver) saver.db.close()
}
