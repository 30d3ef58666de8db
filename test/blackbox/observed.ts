/**
 * What each stack showed, kept for a comparison across stacks: bodies a client got (the read
 * API's Contact, the delivered events, the delivery log entry, the delivery's header names), with
 * what must differ between two runs made comparable: uuids, timestamps, the tenant's random
 * public id, tokens and ids of this run, the stack's ports, and measured latencies. Everything
 * else must be equal.
 */
export type Observed = Map<string, unknown>

export const observed = new Map<string, Observed>()

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi
const DELIVERY_ID = /dlv_[A-Za-z0-9_-]+/g
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g
/** a receiver's `date` header (RFC 9110 IMF-fixdate), kept in the delivery log's response headers */
const HTTP_DATE = /[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/g
/** an OpenTelemetry trace id (the delivery record's `trace_id`): each run's own */
const TRACE_ID = /"[0-9a-f]{32}"/g

/** `value` with each of `run` (this run's own strings, longest first), uuids, delivery ids, trace ids, times and latencies replaced. */
export function comparable(value: unknown, run: Record<string, string>): unknown {
  // a measured duration is the one number that may differ between two correct runs
  let text = JSON.stringify(value, (key, v: unknown) => (key === 'latency_ms' && typeof v === 'number' ? '<ms>' : v))
  for (const [name, s] of Object.entries(run).sort((a, b) => b[1].length - a[1].length)) if (s) text = text.split(s).join(`<${name}>`)
  return JSON.parse(
    text
      .replace(UUID, '<uuid>')
      .replace(DELIVERY_ID, '<delivery id>')
      .replace(TIME, '<time>')
      .replace(HTTP_DATE, '<http date>')
      .replace(TRACE_ID, '"<trace id>"'),
  ) as unknown
}
