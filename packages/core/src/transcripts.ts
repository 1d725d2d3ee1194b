/**
 * Where the real agent transcripts that tests and benchmarks read live: `$CTXLOG_TRANSCRIPTS` when set,
 * else the repository's own `fixtures/transcripts` (found by walking up from the working directory, then
 * from this module). No vitest import, so benchmarks and scripts can use it too.
 *
 * @since 0.2.0
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const marker = join("fixtures", "transcripts", "README.md")

const findAbove = (start: string): string | undefined => {
  let dir = resolve(start)
  for (;;) {
    if (existsSync(join(dir, marker))) return join(dir, "fixtures", "transcripts")
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

/**
 * The transcripts folder: `$CTXLOG_TRANSCRIPTS`, else `fixtures/transcripts` of the repository holding
 * `start` (default the working directory) or this module. Throws a sentence naming both when neither is
 * found (a test setup error, not an expected outcome).
 * @since 0.1.0
 */
export const transcriptsDir = (start: string = process.cwd()): string => {
  const fromEnv = process.env.CTXLOG_TRANSCRIPTS
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv)
  const found = findAbove(start) ?? findAbove(dirname(fileURLToPath(import.meta.url)))
  if (found !== undefined) return found
  throw new Error(
    `no fixtures/transcripts folder above ${start}; set CTXLOG_TRANSCRIPTS to a folder of transcript JSON files`
  )
}

/** The transcript files (`*.json`) of the folder, sorted by name. @since 0.2.0 */
export const transcriptFiles = (dir: string = transcriptsDir()): ReadonlyArray<string> =>
  readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()

/** One transcript's parsed JSON (`{ source, messages }`), by file name. @since 0.2.0 */
export const readTranscript = (name: string, dir: string = transcriptsDir()): unknown =>
  JSON.parse(readFileSync(join(dir, name), "utf8"))
