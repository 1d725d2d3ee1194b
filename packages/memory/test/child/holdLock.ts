// Child process of the write-lock test: take a SQLite file's write lock (BEGIN IMMEDIATE), say "locked",
// hold it for the given milliseconds, write one row to the events' neighbour table, commit, exit.
import BetterSqlite3 from "better-sqlite3"

const [filename = "", holdMs = "0"] = process.argv.slice(2)
const db = new BetterSqlite3(filename)
db.pragma("busy_timeout = 5000")
db.exec("BEGIN IMMEDIATE")
db.exec("insert into projection_checkpoints (name, position) values ('held by a child', 0)")
process.stdout.write("locked\n")
setTimeout(() => {
  db.exec("COMMIT")
  db.close()
  process.stdout.write("released\n")
}, Number(holdMs))
