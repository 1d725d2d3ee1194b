/**
 * Placeholder replaced below.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Source } from "./Source.js"

/** A running viewer. @since 0.1.0 */
export interface Running {
  readonly url: string
}

/** Start the viewer. @since 0.1.0 */
export const start = (
  _source: Source,
  _options: { readonly port: number; readonly host: string }
): Effect.Effect<Running, never, Scope.Scope> => Effect.succeed({ url: "" })
