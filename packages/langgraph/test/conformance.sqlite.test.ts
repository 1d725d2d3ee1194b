/**
 * LangGraph's conformance suite (`@langchain/langgraph-checkpoint-validation`, every case of
 * `validate` plus the opt-in `deltaChannelHistoryTests`) on a SQLite file: a new file per checkpointer.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { CtxlogSaver } from "../src/index.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-langgraph-"))
let made = 0

const initializer = {
  checkpointerName: "CtxlogSaver (sqlite)",
  afterAll: () => rmSync(dir, { recursive: true, force: true }),
  createCheckpointer: () => {
    made += 1
    return new CtxlogSaver({ sqlite: join(dir, `saver-${made}.db`), durability: "normal" })
  },
  destroyCheckpointer: (saver: CtxlogSaver) => saver.close()
}
validate(initializer)
deltaChannelHistoryTests(initializer)
