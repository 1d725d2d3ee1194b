/**
 * @ctxlog/seam — layered context: leveled `<archived_context>` seams over older history, a verbatim
 * window of recent messages, and briefings at cycle boundaries, all recorded as window events.
 *
 * @since 0.1.0
 */

/** `<archived_context>` blocks: render, parse, collect. @since 0.1.0 */
export * as ArchivedContext from "./ArchivedContext.js"
/** Flash briefings and their state text. @since 0.1.0 */
export * as Briefing from "./Briefing.js"
/** Seam levels, thresholds and configuration. @since 0.1.0 */
export * as SeamConfig from "./SeamConfig.js"
/** Errors of seam operations. @since 0.1.0 */
export * as SeamError from "./SeamError.js"
/** The seam host service and its pipeline. @since 0.1.0 */
export * as SeamHost from "./SeamHost.js"
