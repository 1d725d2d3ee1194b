import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { eventLogConformance } from "@ctxlog/testing"
import { SqliteEventLog } from "../src/index.js"

eventLogConformance("SQLite :memory:", SqliteEventLog.layer({ filename: ":memory:" }))

eventLogConformance(
  "SQLite file",
  SqliteEventLog.layer({ filename: join(mkdtempSync(join(tmpdir(), "ctxlog-conformance-")), "log.db") })
)
