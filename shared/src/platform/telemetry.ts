import { join } from 'node:path'
import { diag, DiagLogLevel } from '@opentelemetry/api'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOnSampler, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { readEnvironment } from '../config/environment.ts'
import { CloudTracePropagator } from './telemetry-propagator.ts'
import { JsonLinesSpanExporter } from './telemetry-file-exporter.ts'

/**
 * OpenTelemetry for one process (docs/operations.md, "Traces"). Started by each service's
 * server.ts and by `npm start` before fastify, undici or the Google clients are imported: the
 * HTTP instrumentation patches `node:http` as modules require it, and @fastify/otel registers on
 * every fastify instance created after it (registerOnInitialization). undici is traced through
 * its diagnostics channels, so outbound webhooks carry `traceparent`.
 *
 * Where spans go (TRACE_EXPORTER, config/environment.ts): OTLP/HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, Cloud Trace in production (not LOCAL_WIRING), otherwise the
 * last spans in `DATA_DIR/traces/<process>.jsonl`. Every trace is sampled, whatever the caller's
 * flag: Google's front end marks most requests not sampled, and a contact's path is only
 * followable when all of its hops were kept.
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
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': processName }),
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: SCHEDULED_DELAY_MS })],
  })
  // the global tracer provider, the AsyncLocalStorage context manager and our propagator
  provider.register({ propagator: new CloudTracePropagator() })
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // the platform's own requests; not the exporters' (they suppress tracing) nor health probes
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => req.url === '/healthz' || req.url === '/readyz' }),
      new UndiciInstrumentation(),
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
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
