import { EventLog } from "../src/index.js"
import { eventLogConformance } from "../src/testing.js"

eventLogConformance("memory", EventLog.layerMemory)
