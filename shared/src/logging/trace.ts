/**
 * The trace context Google's front end puts on every request to Cloud Run, read from
 * `traceparent` (W3C: `00-<32 hex trace>-<16 hex span>-<2 hex flags>`) or, when that is absent or
 * malformed, `X-Cloud-Trace-Context` (`<32 hex trace>/<decimal span>;o=<0|1>`).
 *
 * Cloud Logging joins a log entry to its trace through `logging.googleapis.com/trace`
 * (`projects/<project>/traces/<trace>`), `logging.googleapis.com/spanId` (16 hex digits: the
 * decimal span of X-Cloud-Trace-Context is converted) and `logging.googleapis.com/trace_sampled`.
 */
export interface TraceContext {
  traceId: string
  /** 16 lower-case hex digits, or null when the header names no (valid) span */
  spanId: string | null
  sampled: boolean
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const CLOUD_TRACE = /^([0-9a-fA-F]{32})(?:\/(\d{1,20}))?(?:;o=([01]))?$/
const ZERO_TRACE = /^0+$/
const MAX_SPAN = (1n << 64n) - 1n

const one = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value)

function parseTraceparent(header: string | undefined): TraceContext | null {
  const m = header === undefined ? null : TRACEPARENT.exec(header.trim().toLowerCase())
  if (!m || m[1] === 'ff' || ZERO_TRACE.test(m[2]!) || ZERO_TRACE.test(m[3]!)) return null
  return { traceId: m[2]!, spanId: m[3]!, sampled: (Number.parseInt(m[4]!, 16) & 1) === 1 }
}

function parseCloudTraceContext(header: string | undefined): TraceContext | null {
  const m = header === undefined ? null : CLOUD_TRACE.exec(header.trim())
  if (!m || ZERO_TRACE.test(m[1]!)) return null
  let spanId: string | null = null
  if (m[2] !== undefined) {
    const span = BigInt(m[2])
    if (span > 0n && span <= MAX_SPAN) spanId = span.toString(16).padStart(16, '0')
  }
  return { traceId: m[1]!.toLowerCase(), spanId, sampled: m[3] === '1' }
}

/** The request's trace context, or null when it carries none that parses. */
export function traceContextOf(headers: Record<string, string | string[] | undefined>): TraceContext | null {
  return parseTraceparent(one(headers.traceparent)) ?? parseCloudTraceContext(one(headers['x-cloud-trace-context']))
}

/** The Cloud Logging fields of a trace; none without a project (the trace name needs it). */
export function traceLogFields(trace: TraceContext | null, project: string | null | undefined): Record<string, string | boolean> {
  if (!trace || !project) return {}
  const fields: Record<string, string | boolean> = {
    'logging.googleapis.com/trace': `projects/${project}/traces/${trace.traceId}`,
    'logging.googleapis.com/trace_sampled': trace.sampled,
  }
  if (trace.spanId) fields['logging.googleapis.com/spanId'] = trace.spanId
  return fields
}
