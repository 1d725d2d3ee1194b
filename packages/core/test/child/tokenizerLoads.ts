// Child of TokenCounter.lazy.test.ts: import the package, then count with each counter named on the
// command line, printing after each step which encodings' rank tables (gpt-tokenizer's `bpeRanks/*`, 1–2 MB
// of source each: what loading an encoding costs) CommonJS has loaded, as JSON.
import { createRequire } from "node:module"
import { TokenCounter } from "../../src/index.js"

const require = createRequire(import.meta.url)
const tokenizerModules = () =>
  Object.keys(require.cache)
    .filter((path) => path.includes("gpt-tokenizer") && path.includes("/bpeRanks/"))
    .map((path) => path.slice(path.lastIndexOf("/") + 1))
    .sort()

const steps: Array<{ readonly step: string; readonly loaded: ReadonlyArray<string> }> = [
  { step: "import", loaded: tokenizerModules() }
]
const heuristic = TokenCounter.heuristic()
heuristic.count("hello world")
const o200k = TokenCounter.gpt("o200k_base")
const cl100k = TokenCounter.gpt("cl100k_base")
steps.push({ step: "made counters", loaded: tokenizerModules() })
for (const name of process.argv.slice(2)) {
  const counter = name === "o200k_base" ? o200k : cl100k
  if (counter.count("hello world") !== 2) throw new Error(`${name} counted "hello world" wrong`)
  steps.push({ step: `counted ${name}`, loaded: tokenizerModules() })
}
process.stdout.write(`${JSON.stringify(steps)}\n`)
