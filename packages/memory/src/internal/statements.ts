import { type Compilable, type Kysely, type RawBuilder, sql } from "kysely"
import type { Database, NewEventRow, RecallEntriesTable } from "./schema.js"

// The append hot path builds its statements with kysely once, then runs the compiled SQL through the
// driver's own prepared statements: kysely would rebuild and recompile the query on every call.

/** A named placeholder inside a kysely query, resolved when the compiled statement runs. */
class Slot {
  constructor(readonly name: string) {}
}

/** A placeholder for the value named `name`. */
export const slot = <T>(name: string): RawBuilder<T> => sql<T>`${new Slot(name)}`

/** SQL text plus, per parameter, the slot it takes its value from (or a constant kysely inlined). */
export interface Compiled {
  readonly sql: string
  readonly parameters: ReadonlyArray<{ readonly slot: string } | { readonly value: unknown }>
}

/** Compile a kysely query once. */
export const compile = (query: Compilable): Compiled => {
  const compiled = query.compile()
  return {
    sql: compiled.sql,
    parameters: compiled.parameters.map((parameter) =>
      parameter instanceof Slot ? { slot: parameter.name } : { value: parameter }
    )
  }
}

/** The parameter list of a compiled statement for these values. */
export const bind = (statement: Compiled, values: object): Array<unknown> =>
  statement.parameters.map((parameter) => ("slot" in parameter ? Reflect.get(values, parameter.slot) : parameter.value))

/** The statements of the append path, compiled by the dialect of `db`. */
export const appendStatements = (db: Kysely<Database>) => ({
  selectStream: compile(
    db
      .selectFrom("streams")
      .select(["version", "head_hash", "created_at"])
      .where("stream_id", "=", slot<string>("stream"))
  ),
  upsertStream: compile(
    db
      .insertInto("streams")
      .values({
        stream_id: slot<string>("stream"),
        version: slot<number>("version"),
        head_hash: slot<string>("head"),
        created_at: slot<number>("now"),
        updated_at: slot<number>("now")
      })
      .onConflict((conflict) =>
        conflict.column("stream_id").doUpdateSet({
          version: slot<number>("version"),
          head_hash: slot<string>("head"),
          updated_at: slot<number>("now")
        })
      )
  ),
  insertEvent: compile(
    db
      .insertInto("events")
      .values({
        event_id: slot<string>("event_id"),
        stream_id: slot<string>("stream_id"),
        stream_version: slot<number>("stream_version"),
        type: slot<string>("type"),
        schema_version: slot<number>("schema_version"),
        data: slot<string>("data"),
        metadata: slot<string>("metadata"),
        recorded_at: slot<number>("recorded_at"),
        hash: slot<string>("hash")
      })
      .returning("global_position")
  ),
  insertEntry: compile(
    db
      .insertInto("recall_entries")
      .values({
        source: slot<string>("source"),
        stream_id: slot<string | null>("stream_id"),
        owner: slot<string | null>("owner"),
        ref: slot<string>("ref"),
        document_id: slot<string | null>("document_id"),
        kind: slot<string>("kind"),
        role: slot<string>("role"),
        text: slot<string>("text"),
        tokens: slot<number>("tokens"),
        global_position: slot<number | null>("global_position"),
        created_at: slot<number>("created_at")
      })
      .onConflict((conflict) => conflict.columns(["stream_id", "ref"]).doNothing())
      .returning("entry_id")
  ),
  insertFact: compile(
    db.insertInto("facts").values({
      stream_id: slot<string>("stream_id"),
      event_id: slot<string>("event_id"),
      subject: slot<string>("subject"),
      predicate: slot<string>("predicate"),
      object: slot<string>("object"),
      source_message_id: slot<string | null>("source_message_id"),
      global_position: slot<number>("global_position")
    })
  )
})

/** Rows the append path writes (the events table's insert type, `schema.ts`). */
export type NewEvent = NewEventRow

/** A recall row to insert: the table's columns less the generated id, with the source narrowed. */
export type NewEntry = Omit<RecallEntriesTable, "entry_id" | "source"> & {
  readonly source: "message" | "document"
  /**
   * Keep the message's text in its entry (SQLite): its event holds it sealed, so the index cannot read it
   * there (ADR 0139). PostgreSQL keeps every entry's text.
   */
  readonly keepText?: boolean | undefined
}

export interface NewFact {
  readonly stream_id: string
  readonly event_id: string
  readonly subject: string
  readonly predicate: string
  readonly object: string
  readonly source_message_id: string | null
  readonly global_position: number
}
