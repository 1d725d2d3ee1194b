import * as Layer from "effect/Layer"

/**
 * A layer constructor that is also the layer of its defaults: `door(options)` builds a layer, and
 * `door` used as a value is `door()`, built anew each time it is provided (a `Layer.suspend`, as the
 * 0.1 value was a description built on each `provide`). It keeps the 0.1 value form of the doors that
 * became functions in 0.2 (`ContextService.layer`, `…layerMemory`, `WindowRepository.layerReplay`,
 * `EventLog.layerMemory`) working for one minor version (ADR 0060).
 *
 * Why this is sound in Effect 3: a layer is recognised by `Layer.isLayer` (`LayerTypeId in u`, and
 * `Predicate.isObject` accepts functions) and built by reading its own fields (`_op_layer`, …), never
 * by `typeof` or `instanceof`; `Effect.provide` tests `isLayer` before anything else; memo maps key a
 * layer by identity. So the function carries every field of one `Layer.suspend(() => make())`, copied
 * whole (own and inherited, by descriptor, naming none of Effect's internals), and keeps
 * `Function.prototype` (`call`, `bind`). Layer APIs that take a function take it in a position where
 * the value form never type-checked, so no 0.1 call changes meaning.
 */
export const callableLayer = <Options, ROut, E, RIn>(
  make: (options?: Options) => Layer.Layer<ROut, E, RIn>
): ((options?: Options) => Layer.Layer<ROut, E, RIn>) & Layer.Layer<ROut, E, RIn> => {
  const door = (options?: Options): Layer.Layer<ROut, E, RIn> => make(options)
  const value: Layer.Layer<ROut, E, RIn> = Layer.suspend(() => make())
  const chain: Array<object> = []
  for (
    let link: object | null = value;
    link !== null && link !== Object.prototype;
    link = Object.getPrototypeOf(link)
  ) {
    chain.unshift(link)
  }
  // Farthest first, so a nearer field wins as it does on the layer itself.
  for (const link of chain) Object.defineProperties(door, Object.getOwnPropertyDescriptors(link))
  return door as typeof door & Layer.Layer<ROut, E, RIn>
}
