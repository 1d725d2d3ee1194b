import { EventLog } from "@ctxlog/core"
import { eventLogConformance } from "../src/index.js"

eventLogConformance("memory", EventLog.layerMemory())
