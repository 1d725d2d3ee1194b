#!/usr/bin/env node
/**
 * `ctxlog-agent`: parse the command line and run it on Node.
 *
 * @since 0.1.0
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import { cli } from "./Cli.js"

cli(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain({ disableErrorReporting: false }))
