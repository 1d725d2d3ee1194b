// The admin URL the PostgreSQL test server setup provides (packages/memory/test/support/postgresServer.ts).
declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the test server: tests create their own databases on it. */
    readonly pgUrl: string
  }
}

export {}
