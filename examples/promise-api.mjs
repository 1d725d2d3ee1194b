// The Promise API from plain JavaScript: no Effect in sight. Appends a tool round, renders the exact
// OpenAI Chat Completions request, closes, reopens the file and loads the same window.
// Run: node examples/promise-api.mjs   (after `pnpm build`; needs better-sqlite3 installed)
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createContext, Message } from "@ctxlog/client"

const filename = join(mkdtempSync(join(tmpdir(), "ctxlog-example-")), "agent.db")

const ctx = await createContext({ sqlite: filename })
await ctx.append("chat-1", [
  Message.system("You are a careful coding assistant."),
  Message.user("Why does `pnpm build` fail?"),
  Message.assistant("Let me look.", [Message.toolCall("call-1", "read_file", { path: "tsconfig.json" })]),
  Message.tool("call-1", '{ "compilerOptions": { "strict": true } }'),
  Message.assistant("Strict mode flags an implicit any in src/index.ts.")
])
const request = await ctx.render("chat-1", { provider: "openai", model: "gpt-4o" })
console.log("openai request:", JSON.stringify(request).slice(0, 160), "...")
await ctx.close()

// A mistyped path would reject here (create: false) instead of starting an empty log.
const reopened = await createContext({ sqlite: filename, create: false })
const window = await reopened.load("chat-1")
console.log(`reopened: version ${window.version}, ${window.history.length} messages, ${window.tokens.total} tokens`)
try {
  await createContext({ sqlite: `${filename}.typo`, create: false })
} catch (error) {
  console.log(`mistyped path: ${error._tag}`)
}
await reopened.close()
