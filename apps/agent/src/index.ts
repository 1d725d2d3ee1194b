/**
 * ctxlog-agent as a library: the pieces of the sample agent, to copy or to reuse.
 *
 * @since 0.1.0
 */

/** The turn loop. @since 0.1.0 */
export * as Agent from "./Agent.js"
/** The command line. @since 0.1.0 */
export * as Cli from "./Cli.js"
/** The scripted offline demo. @since 0.1.0 */
export * as Demo from "./Demo.js"
/** The environment snapshot taken at the start of each turn (git, changed files, task, date). @since 0.1.0 */
export * as EnvSnapshot from "./EnvSnapshot.js"
/** The command lines of the hints. @since 0.2.0 */
export * as Invocation from "./Invocation.js"
/** One model call, streamed, with its failures. @since 0.2.0 */
export * as ModelCall from "./ModelCall.js"
/** Providers and the budget. @since 0.1.0 */
export * as Provider from "./Provider.js"
/** Session listing. @since 0.1.0 */
export * as Sessions from "./Sessions.js"
/** The skills the agent offers. @since 0.8.0 */
export * as Skills from "./Skills.js"
/** The layer wiring. @since 0.1.0 */
export * as Stack from "./Stack.js"
/** Workspace tools. @since 0.1.0 */
export * as Tools from "./Tools.js"
/** The terminal. @since 0.1.0 */
export * as Ui from "./Ui.js"
/** A session's workspace. @since 0.2.0 */
export * as Workspace from "./Workspace.js"
