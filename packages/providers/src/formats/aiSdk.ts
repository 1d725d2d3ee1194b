/**
 * The `ai-sdk` framework format (see `FrameworkFormat`).
 * @since 0.8.0
 */
import * as Either from "effect/Either"
import type { Format } from "../FrameworkFormat.js"
import { InvalidRequest } from "../InvalidRequest.js"

/** The render as the framework's request. @since 0.8.0 */
export const render: Format = ({ provider }) =>
  Either.left(new InvalidRequest({ provider, detail: "the ai-sdk framework format is being built (issue 35)" }))
