/** How to install better-sqlite3 into a consumer project (see sqlite-binding.mjs). */
export interface SqliteInstall {
  /** npm arguments: the package spec, and `--ignore-scripts` when the workspace's binding is reused. */
  readonly args: ReadonlyArray<string>
  /** Whether the workspace's compiled binding is reused. */
  readonly reused: boolean
  /** Run after `npm install` in `consumer`: copies the binding; the line to print, if any. */
  readonly after: (consumer: string) => string | undefined
}
export declare const sqliteInstall: (range: string) => SqliteInstall
