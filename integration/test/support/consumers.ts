// The consumer projects that more than one packed-tarball test file installs: one `npm install` per run
// each, shared by the files (ADR 0109). packInstall.test.ts and packInstall.aiSdk.test.ts each installed
// `ai@6` and `ai@7` beside our tarballs, and packInstall.test.ts and packInstall.openaiAgents.test.ts each
// installed `@openai/agents`: six installs where three do. Each shared project holds the union of what the
// files installed (our tarballs and their frameworks), so every install-time check (no peer conflict:
// npm's ERESOLVE; `npm ls --all`) now covers the union, and every file still runs all of its own checks in
// it, writing only files of its own names.
//
// The first file to ask installs (holding `<label>.lock`, a directory: mkdir is atomic); a file that asks
// meanwhile waits for the installer's `<label>.done` or `<label>.failed`, or fails at once when the
// installing process is gone without writing either.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { installConsumer, tarballsOf } from "./pack.js"
import type { Packed } from "./packed.js"

/** A shared consumer project: our packages (packed.ts's names) and the other packages installed beside them. */
export interface Consumer {
  readonly packages: ReadonlyArray<string>
  readonly deps: ReadonlyArray<string>
}

// The union of packInstall.test.ts's set (core, compaction, providers, testing) and the integrations set.
const withIntegrations = [
  "core",
  "compaction",
  "providers",
  "testing",
  "memory",
  "seam",
  "turn",
  "client",
  "integrations"
]

/** The shared projects by label. */
export const consumers = {
  /** packInstall.test.ts (round trip, TypeScript check) and packInstall.aiSdk.test.ts (the ported suite). */
  ai6: {
    packages: withIntegrations,
    deps: ["ai@^6", "zod@^4", "typescript@~5.9.3", "@types/node@^20.19.0", "vitest@^3.2.7"]
  },
  ai7: {
    packages: withIntegrations,
    deps: ["ai@^7", "zod@^4", "typescript@~5.9.3", "@types/node@^20.19.0", "vitest@^3.2.7"]
  },
  /** packInstall.test.ts (openai@7 beside our peer range, round trip) and packInstall.openaiAgents.test.ts. */
  agents: { packages: withIntegrations, deps: ["@openai/agents@^0.20.0", "zod@^4", "vitest@^3.2.7"] }
} satisfies Record<string, Consumer>

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The directory of the shared project `label`, installed by whichever file asked first. */
export const sharedConsumer = async (packed: Packed, label: keyof typeof consumers): Promise<string> => {
  const consumer: Consumer = consumers[label]
  const tarballs = tarballsOf(packed, consumer.packages)
  if (packed._tag !== "Packed") throw new Error(`no packed tarballs (${packed._tag})`)
  mkdirSync(packed.consumers, { recursive: true })
  const dir = join(packed.consumers, label)
  const lock = `${dir}.lock`
  const done = `${dir}.done`
  const failed = `${dir}.failed`
  let mine = false
  try {
    mkdirSync(lock)
    mine = true
  } catch {
    // another file installs it (or did)
  }
  if (mine) {
    writeFileSync(join(lock, "pid"), String(process.pid))
    try {
      await installConsumer(dir, tarballs, consumer.deps)
    } catch (error) {
      writeFileSync(failed, error instanceof Error ? error.message : String(error))
      throw error
    }
    writeFileSync(done, "")
    return dir
  }
  for (;;) {
    if (existsSync(done)) return dir
    if (existsSync(failed)) throw new Error(`the shared ${label} install failed:\n${readFileSync(failed, "utf8")}`)
    const pidFile = join(lock, "pid")
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, "utf8"))
      if (pid > 0 && !alive(pid) && !existsSync(done) && !existsSync(failed)) {
        throw new Error(`the process ${pid} installing the shared ${label} project ended without finishing it`)
      }
    }
    await sleep(500)
  }
}
