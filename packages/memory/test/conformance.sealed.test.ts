// The EventLog contract holds for a sealing store (issue 43, ADR 0112): every stream has a subject, so
// every message the suite appends is sealed before it is chained and opened on every read.
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { eventLogConformance } from "@ctxlog/testing"
import { SqliteEventLog } from "../src/index.js"
import * as Postgres from "./support/postgres.js"

const sealing = {
  masterKey: new Uint8Array(randomBytes(32)),
  subjectOf: (stream: string) => `subject-of-${stream.length}`
}

eventLogConformance(
  "SQLite file, sealed per subject",
  SqliteEventLog.layer({
    filename: join(mkdtempSync(join(tmpdir(), "ctxlog-conformance-sealed-")), "log.db"),
    sealing
  })
)

eventLogConformance("PostgreSQL, sealed per subject", Postgres.layer("sealed", { sealing }))
