/**
 * vitest globalSetup: packs our packages once for every packed-tarball test file (packInstall.test.ts,
 * packInstall.langgraph.test.ts, packInstall.openaiAgents.test.ts, packInstall.aiSdk.test.ts). Each file used to
 * pack its own set, so core, compaction and providers were packed (and so built) twice per run. Where the tests
 * do not run (`gated` is false) nothing is packed. The consumer projects several files install the same way
 * are installed once, under this setup's folder (support/consumers.ts). A
 * failed pack does not fail the other integration tests: the tests that need the tarballs fail with its
 * message (`tarballs`).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { gated, packAll } from "./pack.js"

/** Every package a packed-tarball test installs. */
export const packedNames = [
  "core",
  "compaction",
  "providers",
  "testing",
  "memory",
  "seam",
  "turn",
  "client",
  "langgraph",
  "integrations"
]

/** What the setup packed: each package's tarball by its directory name, or why packing failed. */
export type Packed =
  | {
      readonly _tag: "Packed"
      readonly tarballs: Readonly<Record<string, string>>
      /** Where the consumer projects shared by several test files are installed (support/consumers.ts). */
      readonly consumers: string
    }
  | { readonly _tag: "Failed"; readonly message: string }
  | { readonly _tag: "NotGated" }

declare module "vitest" {
  export interface ProvidedContext {
    readonly packed: Packed
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  if (!gated) {
    project.provide("packed", { _tag: "NotGated" })
    return undefined
  }
  const work = mkdtempSync(join(tmpdir(), "ctxlog-packed-"))
  const cleanup = () => rmSync(work, { recursive: true, force: true })
  try {
    const paths = await packAll(packedNames, work)
    project.provide("packed", {
      _tag: "Packed",
      tarballs: Object.fromEntries(packedNames.map((name, index) => [name, paths[index] as string])),
      consumers: join(work, "consumers")
    })
  } catch (error) {
    project.provide("packed", { _tag: "Failed", message: error instanceof Error ? error.message : String(error) })
  }
  return cleanup
}
