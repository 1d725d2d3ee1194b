/**
 * @ctxlog/langgraph — LangGraph.js on the ctxlog event log.
 *
 * @since 0.1.0
 */
export {
  type CtxlogPreModelHook,
  contextStream,
  ctxlogPreModelHook,
  type PreModelHookOptions,
  type PreModelHookUpdate,
  type ThreadRef,
  threadOf,
  usageOf
} from "./PreModelHook.js"
