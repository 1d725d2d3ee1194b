/**
 * @ctxlog/langgraph — LangGraph.js on the ctxlog event log.
 *
 * @since 0.5.0
 */
export { CtxlogSaver, type CtxlogSaverOptions, type SaverWork } from "./CtxlogSaver.js"
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
export { InvalidCheckpointConfig, SaverClosed, SerializationFailed } from "./SaverError.js"
