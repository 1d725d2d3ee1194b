/**
 * @ctxlog/inspector — the `ctxlog` CLI and the local web viewer, and the pure queries they share.
 *
 * @since 0.1.0
 */

/** The command line. @since 0.1.0 */
export * as Cli from "./Cli.js"
/** Loading windows, renders and integrity checks from a source. @since 0.1.0 */
export * as Inspect from "./Inspect.js"
/** The context pipeline used by imports and what-if runs. @since 0.1.0 */
export * as Pipeline from "./Pipeline.js"
/** Pure queries over events and windows (window, blame, diff, usage). @since 0.1.0 */
export * as Queries from "./Queries.js"
/** Undoing a compaction as an event (`ctxlog restore`, the viewer's Restore button). @since 0.8.0 */
export * as Restore from "./Restore.js"
/** The web viewer's HTTP server. @since 0.1.0 */
export * as Server from "./Server.js"
/** One message, whole (every part, its origin and tool pair). @since 0.2.0 */
export * as MessageView from "./MessageView.js"
/** Exit codes and error output of a run. @since 0.2.0 */
export * as Report from "./Report.js"
/** "Did you mean …?" and long lists summarized. @since 0.2.0 */
export * as Suggest from "./Suggest.js"
/** Read-only access to SQLite and PostgreSQL logs. @since 0.1.0 */
export * as Source from "./Source.js"
/** The JSONL export format and imports. @since 0.1.0 */
export * as Transfer from "./Transfer.js"
