/**
 * What a SQLite file's write-ahead log holds: per commit, the pages written, each named by the b-tree
 * (table or index) it belongs to (`dbstat`), `page1` for the header page. The same reading as
 * `bench/src/profileWalPages.ts`, for tests that count the pages a saver writes.
 */
import { readFileSync } from "node:fs"
import BetterSqlite3 from "better-sqlite3"

/** Per commit in the WAL, the b-tree of each page it wrote. */
export const walCommits = (file: string): Array<Array<string>> => {
  const wal = readFileSync(`${file}-wal`)
  const pageSize = wal.readUInt32BE(8)
  const db = new BetterSqlite3(file, { readonly: true })
  const owner = new Map<number, string>()
  try {
    for (const row of db.prepare("select name, pageno from dbstat").all() as Array<{ name: string; pageno: number }>) {
      owner.set(row.pageno, row.name)
    }
  } finally {
    db.close()
  }
  const out: Array<Array<string>> = []
  let current: Array<string> = []
  // A 32-byte header, then frames: a 24-byte header (page number, commit size or 0) and the page.
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const page = wal.readUInt32BE(at)
    current.push(page === 1 ? "page1" : (owner.get(page) ?? "free"))
    if (wal.readUInt32BE(at + 4) !== 0) {
      out.push(current)
      current = []
    }
  }
  return out
}

/** Copy the WAL into the database and empty it (another connection; the writer's stays open). */
export const truncateWal = (file: string): void => {
  const db = new BetterSqlite3(file)
  try {
    const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>
    if (result?.busy !== 0) throw new Error(`wal_checkpoint(TRUNCATE) of ${file} was blocked`)
  } finally {
    db.close()
  }
}
