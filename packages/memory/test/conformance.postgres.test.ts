import { eventLogConformance } from "@ctxlog/core/testing"
import * as Postgres from "./support/postgres.js"

eventLogConformance("PostgreSQL", Postgres.layer("conformance"))
