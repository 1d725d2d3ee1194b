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
