// The synchronous draw of the built-in `Ids` services: the function their `next` effect runs, kept on the
// service under a symbol (not enumerable, not in the interface). `ContextService` draws through it on its
// hot path (one effect less per id, two per `appendMessages` of one message: ADR 0166); a service that
// has none (any other implementation, a test's wrapper) is used through `next`, as before.

const drawKey: unique symbol = Symbol.for("@ctxlog/core/Ids/draw")

/** `service`, marked as drawn synchronously by `draw` (what its `next` runs). */
export const withDraw = <S extends object>(service: S, draw: () => string): S =>
  Object.defineProperty(service, drawKey, { value: draw, enumerable: false })

/** The synchronous draw of a service marked by {@link withDraw}, or undefined. */
export const drawOf = (service: object): (() => string) | undefined => {
  const draw: unknown = Reflect.get(service, drawKey)
  return typeof draw === "function" ? (draw as () => string) : undefined
}
