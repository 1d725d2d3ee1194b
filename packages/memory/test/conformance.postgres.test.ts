import { eventLogConformance } from "@ctxlog/testing"
import * as Postgres from "./support/postgres.js"

eventLogConformance("PostgreSQL", Postgres.layer("conformance"))
