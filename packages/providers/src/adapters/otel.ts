/**
 * ctxlog's spans as OpenTelemetry spans, with one layer: `layer({ tracerProvider })` (a provider you
 * built, e.g. a `BasicTracerProvider` with your span processors) or `layerGlobal()` (the provider your
 * OpenTelemetry SDK registered globally). Each turns ctxlog's tracing on (`Tracing.layer` from
 * `@ctxlog/core`) and installs `@effect/opentelemetry`'s tracer as Effect's tracer. Needs
 * `@effect/opentelemetry` and `@opentelemetry/api` installed (optional peers).
 *
 * `layerFromEnv()` is the one switch for applications (the agent, the CLI): with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set it exports over
 * OTLP/HTTP with the standard OpenTelemetry environment (`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER=none`, ...); without it, nothing happens. It needs
 * `@opentelemetry/sdk-trace-base`, `@opentelemetry/resources` and
 * `@opentelemetry/exporter-trace-otlp-http`, loaded only when the switch is on.
 *
 * Spans carry the GenAI attributes as the conventions type them: arrays stay arrays
 * (`gen_ai.response.finish_reasons`, the provenance arrays) instead of the JSON text Effect's tracer
 * makes of them.
 *
 * @since 0.2.0
 */
import * as OtelResource from "@effect/opentelemetry/Resource"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import { Tracing } from "@ctxlog/core"
import type { AttributeValue, Span, TracerProvider } from "@opentelemetry/api"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"

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

const isArrayValue = (value: unknown): value is AttributeValue =>
  Array.isArray(value) &&
  (value.every((item) => typeof item === "string") ||
    value.every((item) => typeof item === "number") ||
    value.every((item) => typeof item === "boolean"))

/** The OpenTelemetry span under an `@effect/opentelemetry` span (its `span` field). */
const otelSpanOf = (span: Tracer.Span): Span | undefined => {
  const inner: unknown = (span as { readonly span?: unknown }).span
  return typeof inner === "object" && inner !== null && "setAttribute" in inner ? (inner as Span) : undefined
}

/**
 * `@effect/opentelemetry`'s tracer with array attributes kept as arrays (its own turns every
 * non-primitive into text, and the conventions type finish reasons and ctxlog's provenance as arrays).
 */
const arrayAware = (inner: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = inner.span(name, parent, context, links, startTime, kind, options)
      const otel = otelSpanOf(span)
      if (otel === undefined) return span
      const attribute = span.attribute.bind(span)
      // The effect span keeps the value too (its `attributes` map), as its own `attribute` does.
      Object.defineProperty(span, "attribute", {
        value: (key: string, value: unknown) => {
          if (!isArrayValue(value)) return attribute(key, value)
          const kept: unknown = span.attributes
          if (kept instanceof Map) kept.set(key, value)
          otel.setAttribute(key, value)
        }
      })
      return span
    },
    context: inner.context
  })

const tracerLayer: Layer.Layer<never, never, OtelResource.Resource | OtelTracer.OtelTracerProvider> =
  Layer.unwrapEffect(Effect.map(OtelTracer.make, (tracer) => Layer.setTracer(arrayAware(tracer)))).pipe(
    Layer.provideMerge(OtelTracer.layerTracer),
    Layer.discard
  )

/** Tracing on, exported through the given tracer provider. @since 0.2.0 */
export const layer = (options: Options & { readonly tracerProvider: TracerProvider }): Layer.Layer<never> =>
  Layer.merge(
    Tracing.layer,
    tracerLayer.pipe(
      Layer.provide(resourceLayer(options)),
      Layer.provide(Layer.succeed(OtelTracer.OtelTracerProvider, options.tracerProvider))
    )
  )

/** Tracing on, exported through the globally registered OpenTelemetry tracer provider. @since 0.2.0 */
export const layerGlobal = (options: Options = {}): Layer.Layer<never> =>
  Layer.merge(
    Tracing.layer,
    Layer.unwrapEffect(Effect.map(OtelTracer.make, (tracer) => Layer.setTracer(arrayAware(tracer)))).pipe(
      Layer.provideMerge(OtelTracer.layerGlobalTracer),
      Layer.discard,
      Layer.provide(resourceLayer(options))
    )
  )

/** The environment the switch reads. @since 0.8.0 */
export type Env = Readonly<Record<string, string | undefined>>

/**
 * Whether the standard OpenTelemetry environment asks for trace export: an OTLP endpoint is set, and
 * neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` turns it off.
 * @since 0.8.0
 */
export const exportRequested = (env: Env): boolean => {
  const endpoint = (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "").trim()
  if (endpoint.length === 0) return false
  if ((env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true") return false
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "otlp").split(",").map((name) => name.trim().toLowerCase())
  return !exporters.includes("none")
}

/**
 * The OTLP/HTTP traces URL the environment names: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` appended (the OpenTelemetry exporter rules).
 * @since 0.8.0
 */
export const tracesUrl = (env: Env): string => {
  const traces = (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? "").trim()
  if (traces.length > 0) return traces
  return `${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "").trim().replace(/\/+$/, "")}/v1/traces`
}

/**
 * The one switch: when {@link exportRequested}, a tracer provider exporting over OTLP/HTTP (the
 * exporter reads the endpoint, headers and timeout from the environment itself) with batched span
 * processing, flushed and shut down when the layer is released; otherwise an empty layer (ctxlog's
 * tracing stays off). The service name is `OTEL_SERVICE_NAME`, else `serviceName`, else `ctxlog`.
 * @since 0.8.0
 */
export const layerFromEnv = (options: Options & { readonly env?: Env } = {}): Layer.Layer<never> => {
  const env = options.env ?? process.env
  if (!exportRequested(env)) return Layer.empty
  return Layer.unwrapScoped(
    Effect.gen(function* () {
      const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
        yield* Effect.promise(() =>
          Promise.all([
            import("@opentelemetry/sdk-trace-base"),
            import("@opentelemetry/exporter-trace-otlp-http"),
            import("@opentelemetry/resources")
          ])
        )
      const serviceName = env.OTEL_SERVICE_NAME ?? options.serviceName ?? "ctxlog"
      const provider = yield* Effect.acquireRelease(
        Effect.sync(
          () =>
            new BasicTracerProvider({
              resource: resourceFromAttributes({
                "service.name": serviceName,
                ...(options.serviceVersion === undefined ? {} : { "service.version": options.serviceVersion })
              }),
              spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(env) }))]
            })
        ),
        (provider) => Effect.promise(() => provider.shutdown())
      )
      return layer({ ...options, serviceName, tracerProvider: provider })
    })
  )
}
