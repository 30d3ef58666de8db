import { context, ProxyTracerProvider, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context } from '@opentelemetry/api'
import { suppressTracing, W3CTraceContextPropagator } from '@opentelemetry/core'
import { traceContextOf, type TraceContext } from './trace.ts'

/**
 * The W3C trace context across the asynchronous hops (docs/operations.md, "Traces"): a queue
 * message carries it as an attribute, a task as a request header, a change row and a delivery
 * record as a trace id. Only @opentelemetry/api here: without the SDK (platform/telemetry.ts:
 * tests that build an app in process) there is no active span, nothing is written and nothing
 * read changes anything.
 */

/** the attribute our queue adapters write: the W3C `traceparent` of the publisher's span */
export const TRACE_ATTRIBUTE = 'traceparent'
/**
 * what the Pub/Sub client writes itself when its tracing is on (enableOpenTelemetryTracing,
 * telemetry-tracing.js `modernAttributeName`): the traceparent of its own publish ("create")
 * span, a child of ours, so the consumer prefers it
 */
const CLIENT_TRACE_ATTRIBUTE = 'googclient_traceparent'
const CLIENT_PREFIX = 'googclient_'

const w3c = new W3CTraceContextPropagator()
const headerGetter = {
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
  get: (carrier: Record<string, string>, key: string) => carrier[key],
}

/** The active span's trace context, or null when no valid span is active (no SDK, no request). */
export function activeTraceContext(): TraceContext | null {
  const sc = trace.getActiveSpan()?.spanContext()
  if (!sc || !trace.isSpanContextValid(sc)) return null
  return { traceId: sc.traceId, spanId: sc.spanId, sampled: (sc.traceFlags & 1) === 1 }
}

/**
 * A request's trace for its log lines: its span's when the SDK made one (which continues the
 * request's `traceparent` or `X-Cloud-Trace-Context`: platform/telemetry-propagator.ts, or starts a
 * trace when it carries neither), else the headers' as they came.
 */
export function requestTraceContext(headers: Record<string, string | string[] | undefined>): TraceContext | null {
  return activeTraceContext() ?? traceContextOf(headers)
}

/** The active trace id (32 hex), or null: what a change row and a delivery record keep. */
export function activeTraceId(): string | null {
  return activeTraceContext()?.traceId ?? null
}

/** `traceparent` of the active span, or null (no active span): what a store keeps with a job. */
export function activeTraceparent(): string | null {
  const t = activeTraceContext()
  return t ? `00-${t.traceId}-${t.spanId}-${t.sampled ? '01' : '00'}` : null
}

/**
 * The attributes with the active span's `traceparent` added (publish side; also the task
 * headers). An attribute already there is kept: a dead letter re-published as it came keeps its
 * original trace. The Pub/Sub client's own `googclient_` attributes are dropped: the client writes
 * them afresh on each publish (and warns when it finds one already set).
 */
export function withTraceparent(attributes: Record<string, string>): Record<string, string> {
  const own = Object.keys(attributes).some((k) => k.startsWith(CLIENT_PREFIX))
    ? Object.fromEntries(Object.entries(attributes).filter(([k]) => !k.startsWith(CLIENT_PREFIX)))
    : attributes
  if (own[TRACE_ATTRIBUTE] !== undefined) return own
  const traceparent = activeTraceparent()
  return traceparent ? { ...own, [TRACE_ATTRIBUTE]: traceparent } : own
}

/**
 * The context a `traceparent` value names, or the active context when it names none (absent or
 * malformed: a message from before traces, or from another producer, is handled all the same).
 */
function contextOfTraceparent(traceparent: string | null | undefined): Context {
  const extracted = traceparent ? w3c.extract(ROOT_CONTEXT, { traceparent }, headerGetter) : ROOT_CONTEXT
  return trace.getSpanContext(extracted) ? extracted : context.active()
}

/** The context a message's attributes name (the client's attribute first), else the active one. */
function contextOfAttributes(attributes: Readonly<Record<string, string>> | undefined): Context {
  return contextOfTraceparent(attributes?.[CLIENT_TRACE_ATTRIBUTE] ?? attributes?.[TRACE_ATTRIBUTE])
}

/** the API's own no-op provider: what the global proxy delegates to until an SDK registers one */
const NO_SDK = new ProxyTracerProvider().getDelegate()
/** whether an SDK's tracer provider is registered (platform/telemetry.ts) */
function spansRecorded(): boolean {
  const provider = trace.getTracerProvider()
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_SDK
}

/**
 * Runs `fn` in a new span that continues the trace `parentOf` names (a message's or a task's), or
 * in a span of its own trace when it names none. The span ends when `fn` settles; a throw marks
 * it as an error. A message handled inside an HTTP request (a Pub/Sub push) gets the publisher's
 * trace, not the push request's: the push carries none of the publisher's headers.
 *
 * Where no SDK is registered, `fn` runs as it is (a synchronous throw still comes back as a
 * rejection): the API's no-op tracer would have the parent parsed, make a span that records
 * nothing and run fn in a context nothing reads: 1.16 against 0.12 µs a task or message
 * (docs/performance.md, "Eleventh pass"). Hence the parent as a function.
 */
function inSpanOf<T>(parentOf: () => Context, name: string, kind: SpanKind, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T> {
  if (!spansRecorded()) {
    try {
      return fn()
    } catch (err) {
      return Promise.reject(err)
    }
  }
  const tracer = trace.getTracer('lsv-platform')
  return tracer.startActiveSpan(name, { kind, attributes }, parentOf(), async (span) => {
    try {
      return await fn()
    } catch (err) {
      span.recordException(err as Error)
      span.setStatus({ code: SpanStatusCode.ERROR })
      throw err
    } finally {
      span.end()
    }
  })
}

/** Runs a queue message's handler in a consumer span continuing the publisher's trace. */
export function inMessageSpan<T>(topic: string, message: { id: string; attributes?: Record<string, string> }, fn: () => Promise<T>): Promise<T> {
  return inSpanOf(
    () => contextOfAttributes(message.attributes),
    `${topic} process`,
    SpanKind.CONSUMER,
    { 'messaging.system': 'gcp_pubsub', 'messaging.destination.name': topic, 'messaging.message.id': message.id },
    fn,
  )
}

/** The context a task's stored `traceparent` names, else the root: never the context of whoever woke the scheduler. */
function contextOfTask(traceparent: string | null): Context {
  const stored = traceparent ? w3c.extract(ROOT_CONTEXT, { traceparent }, headerGetter) : ROOT_CONTEXT
  return trace.getSpanContext(stored) ? stored : ROOT_CONTEXT
}

/**
 * Runs a stored task's handler in a consumer span continuing the trace of whoever enqueued it
 * (its stored `traceparent`), or in a trace of its own: never in the context of whatever woke the
 * scheduler, which is another request's (a test event's delivery ran in a visit's trace).
 */
export function inTaskSpan<T>(queue: string, traceparent: string | null, fn: () => Promise<T>): Promise<T> {
  return inSpanOf(() => contextOfTask(traceparent), 'task run', SpanKind.CONSUMER, { 'lsv.task.queue': queue }, fn)
}

/**
 * Runs `fn` with tracing suppressed: a request it sends through an instrumented client (undici,
 * node:http) starts no span and carries no `traceparent` of ours. For a client that is not the
 * platform: a benchmark's bare control, a test's caller that sets its own `traceparent`.
 */
export function untraced<T>(fn: () => T): T {
  return context.with(suppressTracing(context.active()), fn)
}
