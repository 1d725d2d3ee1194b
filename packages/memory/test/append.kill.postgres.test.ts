import { describe } from "@effect/vitest"
import { appendKillTest } from "./support/appendKill.js"
import { freshDatabase } from "./support/postgres.js"

// SIGKILL at random moments of appends on one PostgreSQL database (see support/appendKill.ts): the
// server rolls back the transaction of a connection that dies, so an append is all or nothing.
describe("SIGKILL during appends", () => {
  appendKillTest("PostgreSQL", freshDatabase("kill"))
})
