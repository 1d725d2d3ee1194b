// Child process of the orphan-sweep test: start a throwaway PostgreSQL cluster, print its directory's
// URL, then wait to be killed (SIGKILL: no exit hook runs, the server is left behind).
import { startCluster } from "../support/cluster.js"

const cluster = await startCluster()
process.stdout.write(`${JSON.stringify({ url: cluster.url })}\n`)
setInterval(() => {}, 60_000)
