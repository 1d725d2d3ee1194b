// Child process of the first-open kill test: say "ready" on stdout, open (create and migrate) the SQLite
// file given, say "opened" with the time the open took, and exit. The parent kills it at a random point.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqliteEventLog } from "../../src/index.js"

const [filename = ""] = process.argv.slice(2)

process.stdout.write("ready\n", () => {
  const started = performance.now()
  Effect.runPromise(Effect.scoped(Layer.build(SqliteEventLog.layer({ filename, durability: "full" })))).then(
    () => process.stdout.write(`opened ${Math.round((performance.now() - started) * 1000)}\n`, () => process.exit(0)),
    (cause: unknown) => {
      process.stdout.write(`failed ${String(cause)}\n`, () => process.exit(1))
    }
  )
})
