/**
 * @ctxlog/memory
 *
 * @since 0.1.0
 */
export {}

/** Conversation memory over the log, shaped by a policy. @since 0.1.0 */
export * as ConversationMemoryPolicy from "./ConversationMemoryPolicy.js"
/** Conversation memory keeping the last n messages, tool-pair safe. @since 0.1.0 */
export * as SlidingWindowMemory from "./SlidingWindowMemory.js"
/** Conversation memory keeping the newest history within a token budget, tool-pair safe. @since 0.1.0 */
export * as TokenWindowMemory from "./TokenWindowMemory.js"
/** Per-turn context assembly: concurrent recall and graph-fact lookup, retrieval policy, skill disambiguation. @since 0.1.0 */
export * as ContextAssembly from "./ContextAssembly.js"
