#!/usr/bin/env node
// The `ctxlog` bin: a committed file, so that `pnpm install` links it before anything is built (a bin that
// pointed at dist/bin.js made the first install print `WARN Failed to create bin … ENOENT`). It runs the
// built CLI; in a clone that is not built yet it says how to build instead of failing on a missing module.
import { existsSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"

const built = fileURLToPath(new URL("../dist/bin.js", import.meta.url))
if (!existsSync(built)) {
  process.stderr.write(
    "ctxlog: the CLI is not built here; in the repository run `pnpm build` (or `pnpm ctxlog …`, which builds first)\n"
  )
  process.exit(1)
}
await import(pathToFileURL(built).href)
