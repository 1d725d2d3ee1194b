// One Mastra memory thread for `pnpm bench mastra` (issue 42: "ahead of Mastra"). Mastra 1.x needs
// Node >= 22.13, so the bench runs this file on a Node 22 binary and drives it over stdin/stdout, one JSON
// command a line, one JSON answer a line. The messages come from the bench as ctxlog message inputs
// (role, parts), so every subject stores the same text; each becomes a Mastra v2 message: text parts as
// text, a tool call and a tool result as `tool-invocation` parts (state "call" / "result") of assistant
// messages, as Mastra's own message list stores them.
//
// Commands: open {file} · save {messages} · turn {messages} (save, then read the thread back with
// `Memory.recall`, every message) · wchar (bytes this process passed to write(2)) · pragmas · close ·
// resume {file} (a new store and memory on the file, the thread read back, closed) · size {file} (the
// file after a WAL checkpoint).
import { readFileSync, statSync } from "node:fs"
import { createInterface } from "node:readline"
import { LibSQLStore } from "@mastra/libsql"
import { Memory } from "@mastra/memory"

const threadId = "bench"
const resourceId = "bench"
let sequence = 0
let store
let memory

const open = async (file) => {
  const storage = new LibSQLStore({ id: `bench-${sequence}`, url: `file:${file}` })
  await storage.init()
  // Message history only: no semantic recall (no embedder), no working or observational memory.
  const mem = new Memory({
    storage,
    options: { lastMessages: false, semanticRecall: false, workingMemory: { enabled: false } }
  })
  return { storage, memory: mem }
}

const partOf = (part) => {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text }
    case "tool_call":
      return {
        type: "tool-invocation",
        toolInvocation: { state: "call", toolCallId: part.id, toolName: part.name, args: part.input }
      }
    case "tool_result":
      return {
        type: "tool-invocation",
        toolInvocation: {
          state: "result",
          toolCallId: part.toolCallId,
          toolName: "read_file",
          args: {},
          result: part.content
        }
      }
    default:
      throw new Error(`thread.mjs: no Mastra form for a ${part.type} part`)
  }
}

const mastraMessages = (inputs) =>
  inputs.map((input) => {
    sequence++
    return {
      id: `m${sequence}`,
      role: input.role === "user" ? "user" : "assistant",
      createdAt: new Date(1_700_000_000_000 + sequence),
      threadId,
      resourceId,
      content: { format: 2, parts: input.parts.map(partOf) }
    }
  })

const readBack = async (mem) => (await mem.recall({ threadId, resourceId, perPage: false })).messages.length

const wchar = () => {
  const line = readFileSync("/proc/self/io", "utf8")
    .split("\n")
    .find((l) => l.startsWith("wchar:"))
  return line === undefined ? 0 : Number(line.split(":")[1])
}

const checkpoint = async (file) => {
  const { storage } = await open(file)
  await storage.client.execute("PRAGMA wal_checkpoint(TRUNCATE)")
  await storage.close()
  return statSync(file).size
}

const commands = {
  open: async ({ file }) => {
    ;({ storage: store, memory } = await open(file))
    const now = new Date()
    await memory.saveThread({
      thread: { id: threadId, resourceId, title: "bench", createdAt: now, updatedAt: now, metadata: {} }
    })
    return {}
  },
  save: async ({ messages }) => {
    await memory.saveMessages({ messages: mastraMessages(messages) })
    return {}
  },
  turn: async ({ messages }) => {
    await memory.saveMessages({ messages: mastraMessages(messages) })
    return { read: await readBack(memory) }
  },
  wchar: async () => ({ wchar: wchar() }),
  pragmas: async () => {
    const row = async (sql) => Object.values((await store.client.execute(sql)).rows[0] ?? {})[0]
    return { journalMode: await row("PRAGMA journal_mode"), synchronous: await row("PRAGMA synchronous") }
  },
  close: async () => {
    await memory.settled()
    await store.close()
    return {}
  },
  resume: async ({ file }) => {
    const fresh = await open(file)
    const read = await readBack(fresh.memory)
    await fresh.memory.settled()
    await fresh.storage.close()
    return { read }
  },
  size: async ({ file }) => ({ bytes: await checkpoint(file) })
}

// One command at a time, in order: the bench awaits each answer before it sends the next.
const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  const { id, op, ...args } = JSON.parse(line)
  try {
    const run = commands[op]
    if (run === undefined) throw new Error(`thread.mjs: unknown command ${op}`)
    process.stdout.write(`${JSON.stringify({ id, ok: true, ...(await run(args)) })}\n`)
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ id, ok: false, error: String(error?.stack ?? error) })}\n`)
  }
}
