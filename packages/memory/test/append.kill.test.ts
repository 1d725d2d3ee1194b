import { describe } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { appendKillTest } from "./support/appendKill.js"
import { tempFile } from "./support/stores.js"

// SIGKILL at random moments of appends on one SQLite file (see support/appendKill.ts).
describe("SIGKILL during appends", () => {
  appendKillTest(
    "SQLite file",
    Effect.sync(() => tempFile())
  )
})
