/** One packed package (see pack-packages.mjs). */
export interface PackedPackage {
  /** Its directory, relative to the repository root. */
  readonly dir: string
  /** Its package.json. */
  readonly manifest: {
    readonly name: string
    readonly version: string
    readonly exports: Readonly<Record<string, unknown>>
    readonly peerDependenciesMeta?: Readonly<Record<string, unknown>>
  }
  /** The tarball's path. */
  readonly tarball: string
}
export declare const packPackages: (
  dirs: ReadonlyArray<string>,
  destination: string
) => Promise<ReadonlyArray<PackedPackage>>
/** Every published (not private) package directory under packages/ and apps/, relative to the root. */
export declare const publishedDirs: () => ReadonlyArray<string>
/** packPackages, then `destination/packed.json` listing each dir, name, version and tarball. */
export declare const packFolder: (
  dirs: ReadonlyArray<string>,
  destination: string
) => Promise<ReadonlyArray<PackedPackage>>
/** The tarballs in CTXLOG_PACKED_DIR when it holds every one of `dirs` at its version; else packPackages. */
export declare const packOnce: (
  dirs: ReadonlyArray<string>,
  destination: string
) => Promise<ReadonlyArray<PackedPackage>>
