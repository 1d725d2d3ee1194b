/**
 * ctxlog's spans as OpenTelemetry spans, with one layer: `layer({ tracerProvider })` (a provider you
 * built, e.g. a `BasicTracerProvider` with your span processors) or `layerGlobal()` (the provider your
 * OpenTelemetry SDK registered globally). Each turns ctxlog's tracing on (`Tracing.layer` from
 * `@ctxlog/core`) and installs `@effect/opentelemetry`'s tracer as Effect's tracer. Needs
 * `@effect/opentelemetry` and `@opentelemetry/api` installed (optional peers).
 *
 * @since 0.2.0
 */
import * as OtelResource from "@effect/opentelemetry/Resource"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import { Tracing } from "@ctxlog/core"
import type { TracerProvider } from "@opentelemetry/api"
import * as Layer from "effect/Layer"

/** The service name recorded on the spans' resource. Default `ctxlog`. @since 0.2.0 */
export interface Options {
  readonly serviceName?: string
  readonly serviceVersion?: string
}

/** The resource layer the spans carry (service name and version). @since 0.2.0 */
export const resourceLayer = (options: Options) =>
  OtelResource.layer({
    serviceName: options.serviceName ?? "ctxlog",
    // `@effect/opentelemetry`'s options are exact (`serviceVersion?: string`).
    ...(options.serviceVersion === undefined ? {} : { serviceVersion: options.serviceVersion })
  })

/** Tracing on, exported through the given tracer provider. @since 0.2.0 */
export const layer = (options: Options & { readonly tracerProvider: TracerProvider }): Layer.Layer<never> =>
  Layer.merge(
    Tracing.layer,
    Layer.discard(
      OtelTracer.layer.pipe(
        Layer.provide(resourceLayer(options)),
        Layer.provide(Layer.succeed(OtelTracer.OtelTracerProvider, options.tracerProvider))
      )
    )
  )

/** Tracing on, exported through the globally registered OpenTelemetry tracer provider. @since 0.2.0 */
export const layerGlobal = (options: Options = {}): Layer.Layer<never> =>
  Layer.merge(Tracing.layer, Layer.discard(OtelTracer.layerGlobal.pipe(Layer.provide(resourceLayer(options)))))
