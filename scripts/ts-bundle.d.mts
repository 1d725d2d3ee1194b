/**
 * The bundle of a TypeScript entry of the workspace (an absolute path): one ES module with the entry, the
 * workspace sources it imports and its packages, built by esbuild when missing or stale (cached by the
 * contents of its workspace inputs, the lockfile and ts-bundle.mjs). Run it as `node BUNDLE ...args`.
 */
export declare const bundledEntry: (entry: string) => Promise<string>
/** `bundledEntry` for synchronous callers: a stale bundle is built by running ts-bundle.mjs in a child. */
export declare const bundledEntrySync: (entry: string) => string
