import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation"
import { CtxlogSaver } from "../src/index.js"

const initializer = {
  checkpointerName: "CtxlogSaver (memory)",
  createCheckpointer: () => new CtxlogSaver({ memory: true }),
  destroyCheckpointer: (saver: CtxlogSaver) => saver.close()
}
validate(initializer)
deltaChannelHistoryTests(initializer)
