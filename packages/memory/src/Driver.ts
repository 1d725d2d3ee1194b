/**
 * Database drivers, loaded on first use. `better-sqlite3` and `pg` are optional peer dependencies: an
 * SQLite-only project installs neither `pg` nor its types, and the reverse. Each backend imports its
 * driver when its layer is built, so a missing driver fails that layer with {@link DriverMissing}
 * naming the package to install, and never the import of `@ctxlog/memory`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** The driver packages a backend can need. @since 0.1.0 */
export type Package = "better-sqlite3" | "pg"

/** A backend's driver package is not installed (or failed to load). @since 0.1.0 */
export class DriverMissing extends Schema.TaggedError<DriverMissing>()("DriverMissing", {
  driver: Schema.Literal("better-sqlite3", "pg"),
  backend: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.backend} needs the "${this.driver}" package: install it next to @ctxlog/memory (npm install ${this.driver}); loading it failed: ${this.detail}`
  }
}
