// Registered with `--import`: appends every specifier the ESM loader resolves that names gpt-tokenizer to
// the file in CTXLOG_RESOLVE_LOG (the loader's hooks run off the main thread, so they write a file).
import { register } from "node:module"

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from "node:fs"
export async function resolve(specifier, context, next) {
  if (specifier.includes("gpt-tokenizer")) appendFileSync(process.env.CTXLOG_RESOLVE_LOG, specifier + "\\n")
  return next(specifier, context)
}`)}`
)
