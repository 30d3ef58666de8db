import { join } from 'node:path'
import { diag, DiagLogLevel, type Span } from '@opentelemetry/api'
import type { FastifyRequest } from 'fastify'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources'
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { randomUUID } from 'node:crypto'
import { readEnvironment } from '../config/environment.ts'
import { CONTRACT_VERSION } from '../contract/version.ts'
import { CloudTracePropagator } from './telemetry-propagator.ts'
import { JsonLinesSpanExporter } from './telemetry-file-exporter.ts'
import { RedactingSpanProcessor } from './telemetry-redaction.ts'
import { RefusedRequestFilter } from './telemetry-refusals.ts'

/**
 * OpenTelemetry for one process (docs/operations.md, "Traces"). Started by each service's
 * server.ts and by `npm start` before fastify, undici or the Google clients are imported: the
 * HTTP instrumentation patches `node:http` as modules require it, and @fastify/otel registers on
 * every fastify instance created after it (registerOnInitialization). undici is traced through
 * its diagnostics channels, so outbound webhooks carry `traceparent`.
 *
 * Where spans go (TRACE_EXPORTER, config/environment.ts): OTLP/HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, Cloud Trace in production (not LOCAL_WIRING), otherwise the
 * last spans in `DATA_DIR/traces/<process>.jsonl`. Every span passes the redaction policy on its
 * way out (telemetry-redaction.ts).
 *
 * Sampling is parent-based: a caller's (or Google's front end's) sampled `traceparent` is
 * honoured, an unsampled one is not traced, and a trace started here is kept with the
 * probability TRACE_SAMPLE_RATIO (default 1; sized in docs/capacity.md). Every hop after the
 * first inherits the decision through its `traceparent`, so a kept trace is whole. A request
 * refused before it was served (a 401, 403, 404, 405, 413 or 429, or a client error on no route) exports
 * no span even when sampled, unless TRACE_REFUSED_REQUESTS is set (telemetry-refusals.ts).
 */
/** how long finished spans wait to be exported together (the SDK's default is 5 s) */
const SCHEDULED_DELAY_MS = 1000

let sdk: { provider: NodeTracerProvider; unregister(): void } | null = null

export type TraceExporterKind = 'cloud-trace' | 'otlp' | 'file' | 'none'

export function traceExporterKind(env: Record<string, string | undefined>): TraceExporterKind {
  const v = readEnvironment(env)
  if (v.TRACE_EXPORTER) return v.TRACE_EXPORTER
  if (v.OTEL_EXPORTER_OTLP_ENDPOINT) return 'otlp'
  if (v.NODE_ENV === 'production' && !v.LOCAL_WIRING) return 'cloud-trace'
  return v.NODE_ENV === 'test' ? 'none' : 'file'
}

async function exporterOf(kind: TraceExporterKind, processName: string, env: Record<string, string | undefined>): Promise<SpanExporter | null> {
  const v = readEnvironment(env)
  if (kind === 'otlp') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
    return new OTLPTraceExporter({ url: `${v.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318'}/v1/traces` })
  }
  if (kind === 'cloud-trace') {
    const { TraceExporter } = await import('@google-cloud/opentelemetry-cloud-trace-exporter')
    return new TraceExporter(v.GOOGLE_CLOUD_PROJECT ? { projectId: v.GOOGLE_CLOUD_PROJECT } : {})
  }
  if (kind === 'file') return new JsonLinesSpanExporter(join(v.DATA_DIR, 'traces', `${processName}.jsonl`))
  return null
}

/**
 * @fastify/otel names a handler's span after the handler function, or, when it is anonymous (most
 * are), after the plugin that registered it: every portal route's was the API reference plugin's.
 * The route's method and pattern say which handler it is (a pattern: no request's values in it).
 */
function nameHandlerSpanAfterRoute(span: Span, info: { hookName: string; request: FastifyRequest }): void {
  if (info.hookName !== 'handler' || !span.isRecording()) return
  span.updateName(`handler - ${info.request.method} ${info.request.routeOptions.url ?? 'unknown route'}`)
}

/**
 * Who exports: `service.name` (OTEL_SERVICE_NAME, else the process name), `service.version` (Cloud
 * Run's revision when there is one, else the contract version), `service.instance.id` (this
 * process), and whatever OTEL_RESOURCE_ATTRIBUTES adds. The env detector reads both OTEL_
 * variables from the process environment, as the OpenTelemetry spec has it.
 */
function resourceOf(processName: string, env: Record<string, string | undefined>): Resource {
  const own = resourceFromAttributes({
    'service.name': processName,
    'service.version': env.K_REVISION ?? CONTRACT_VERSION,
    'service.instance.id': randomUUID(),
  })
  // the env detector's attributes win (OTEL_SERVICE_NAME over OTEL_RESOURCE_ATTRIBUTES' service.name)
  return own.merge(detectResources({ detectors: [envDetector] }))
}

/**
 * Starts the SDK for the process `processName` (a service, or `local-stack`). A configuration
 * error is left to the composition root, which reports it by name and exits 78: this starts
 * nothing then.
 */
export async function startTelemetry(processName: string, env: Record<string, string | undefined> = process.env): Promise<void> {
  if (sdk) return
  let exporter: SpanExporter | null
  try {
    exporter = await exporterOf(traceExporterKind(env), processName, env)
  } catch {
    return
  }
  if (!exporter) return
  diag.setLogger({ error: (m) => console.error(`otel: ${m}`), warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR)
  // the trace SDK and the instrumentations, not @opentelemetry/sdk-node: that one also loads the
  // metrics, logs, gRPC and Prometheus exporters (2.5 s of imports here, on every cold start)
  const settings = readEnvironment(env)
  // refusals are dropped before redaction, which then runs only on spans that are exported
  const exporting = new RedactingSpanProcessor(new BatchSpanProcessor(exporter, { scheduledDelayMillis: SCHEDULED_DELAY_MS }))
  const provider = new NodeTracerProvider({
    resource: resourceOf(processName, env),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.TRACE_SAMPLE_RATIO) }),
    spanProcessors: [settings.TRACE_REFUSED_REQUESTS ? exporting : new RefusedRequestFilter(exporting)],
  })
  // the global tracer provider, the AsyncLocalStorage context manager and our propagator
  provider.register({ propagator: new CloudTracePropagator() })
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // the platform's own requests; not the exporters' (they suppress tracing) nor health probes
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => req.url === '/healthz' || req.url === '/readyz' }),
      new UndiciInstrumentation(),
      new FastifyOtelInstrumentation({ registerOnInitialization: true, lifecycleHook: nameHandlerSpanAfterRoute }),
    ],
  })
  sdk = { provider, unregister }
}

/** Ends the SDK, exporting what it holds (the SIGTERM drain: platform/serve.ts). */
export async function stopTelemetry(): Promise<void> {
  const running = sdk
  sdk = null
  if (!running) return
  running.unregister()
  await running.provider.shutdown().catch(() => {})
}
