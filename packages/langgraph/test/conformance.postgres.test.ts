/**
 * LangGraph's conformance suite (`validate` plus the opt-in `deltaChannelHistoryTests`) on PostgreSQL:
 * a database of its own per checkpointer (see `support/postgres.ts`).
 */
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { CtxlogSaver } from "../src/index.js"
import { freshDatabase } from "./support/postgres.js"

const drops = new WeakMap<CtxlogSaver, () => Promise<void>>()

const initializer = {
  checkpointerName: "CtxlogSaver (postgres)",
  createCheckpointer: async () => {
    const database = await freshDatabase()
    const saver = new CtxlogSaver({ postgres: database.url })
    drops.set(saver, database.drop)
    return saver
  },
  destroyCheckpointer: async (saver: CtxlogSaver) => {
    await saver.close()
    await drops.get(saver)?.()
  }
}
validate(initializer)
deltaChannelHistoryTests(initializer)
