import type { EventLog } from "@ctxlog/core"

/** Metadata stored beside the events this package appends, so the log says which part decided them. */
export const by = (operation: string, causationId?: string): EventLog.EventMetadata => ({
  actor: `@ctxlog/compaction/${operation}`,
  ...(causationId === undefined ? {} : { causationId })
})
