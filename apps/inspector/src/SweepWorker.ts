/**
 * The worker thread of a sweep ({@link SweepPool.runAll}): runs each job it is posted and posts back
 * its outcome.
 *
 * @since 0.5.0
 */
import { parentPort, workerData } from "node:worker_threads"
import * as Effect from "effect/Effect"
import * as SweepPool from "./SweepPool.js"

const data = workerData as SweepPool.WorkerData
const port = parentPort

port?.on("message", (message: { readonly index: number; readonly job: SweepPool.Job }) => {
  void Effect.runPromise(SweepPool.runJob(message.job, data.candidates)).then((outcome) =>
    port.postMessage({ index: message.index, outcome })
  )
})
