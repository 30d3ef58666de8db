import { SpanKind, type AttributeValue, type Attributes, type Context } from '@opentelemetry/api'
import { LRUCache } from 'lru-cache'
import type { ReadableSpan, Span, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base'
import { REDACTED, redactReceiverUrl, redactText, redactUrl } from '../logging/redact.ts'

/**
 * The span sink's write seam for the redaction policy (logging/redact.ts): every span reaches its
 * exporter through this processor, which hands on a copy whose name, attributes, event attributes
 * and status message carry no credential. The instrumentations write URLs raw (`url.full`,
 * `url.query`, `url.path`, `http.target`, `http.url`): a sign-in link's token, a source token sent
 * as `?token=`, a reveal page's id, a receiver's whole URL. An outbound request's URL (a client
 * span: a tenant's receiver) loses its whole query and userinfo; an inbound one its credential
 * parameters. Only ended, sampled spans get here, so an unsampled request costs nothing.
 */

/** the URL attributes of the HTTP semantic conventions (old and new) */
const URL_KEYS = new Set(['url.full', 'http.url', 'url.query', 'url.path', 'http.target'])

function redactedValue(value: AttributeValue | undefined, fn: (s: string) => string): AttributeValue | undefined {
  if (typeof value === 'string') return fn(value)
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? fn(v) : v)) as AttributeValue
  return value
}

/** url.query holds the query without its `?`: an outbound one goes whole, an inbound one by name */
const redactOutboundQuery = (s: string) => (s === '' ? s : REDACTED)
const redactInboundQuery = (s: string) => (redactUrl(`?${s}`) ?? '').slice(1)
const redactOutboundUrl = (s: string) => redactText(redactReceiverUrl(s) ?? s)
const redactInboundUrl = (s: string) => redactText(redactUrl(s) ?? s)

/**
 * An outbound URL attribute's redacted form, remembered: every delivery to an endpoint carries the
 * same receiver URL (and path and query), which was parsed and scanned again for every span. The
 * keys are receiver URLs, which this process holds anyway (the integrations it delivers to).
 * Inbound URLs are not remembered: each caller's differs, and some carry a credential.
 */
function remembered(redact: (s: string) => string): (s: string) => string {
  const cache = new LRUCache<string, string>({ max: 1_000 })
  return (s) => {
    let redacted = cache.get(s)
    if (redacted === undefined) cache.set(s, (redacted = redact(s)))
    return redacted
  }
}
const OUTBOUND = { query: remembered(redactOutboundQuery), url: remembered(redactOutboundUrl) }
const INBOUND = { query: redactInboundQuery, url: redactInboundUrl }

function urlRedactor(key: string, outbound: boolean): (s: string) => string {
  const redactors = outbound ? OUTBOUND : INBOUND
  return key === 'url.query' ? redactors.query : redactors.url
}

/** The attributes with every credential replaced; the same object when none was found. */
function redactedAttributes(attributes: Attributes, outbound: boolean): Attributes {
  let out: Attributes | null = null
  for (const key in attributes) {
    const value = attributes[key]
    // numbers and booleans hold no credential
    if (typeof value !== 'string' && !Array.isArray(value)) continue
    const redacted = redactedValue(value, URL_KEYS.has(key) ? urlRedactor(key, outbound) : redactText)
    if (redacted === value || (Array.isArray(value) && JSON.stringify(redacted) === JSON.stringify(value))) continue
    out ??= { ...attributes }
    out[key] = redacted
  }
  return out ?? attributes
}

/** The events with their attributes redacted; the same array when none changed. */
function redactedEvents(events: TimedEvent[], outbound: boolean): TimedEvent[] {
  let out: TimedEvent[] | null = null
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const attributes = e.attributes ? redactedAttributes(e.attributes, outbound) : e.attributes
    if (attributes === e.attributes) continue
    out ??= events.slice()
    out[i] = { ...e, attributes }
  }
  return out ?? events
}

/**
 * The span as the exporter may see it: the span itself when nothing in it is secret (a delivery's
 * spans: the receiver URL's redacted form is remembered), else a view whose name, attributes,
 * events and status are redacted. A view is made only when needed: every exporter reads a view's
 * fields through its prototype, which cost a JSON line about 40 % more than the span itself.
 */
function redactedSpan(span: ReadableSpan): ReadableSpan {
  const outbound = span.kind === SpanKind.CLIENT || span.kind === SpanKind.PRODUCER
  const name = redactText(span.name)
  const attributes = redactedAttributes(span.attributes, outbound)
  const events = redactedEvents(span.events, outbound)
  const message = span.status.message === undefined ? undefined : redactText(span.status.message)
  const status = message === span.status.message ? span.status : { ...span.status, message }
  if (name === span.name && attributes === span.attributes && events === span.events && status === span.status) return span
  // a view, not a mutation: the span object stays the SDK's
  return Object.create(span, {
    name: { value: name, enumerable: true },
    attributes: { value: attributes, enumerable: true },
    events: { value: events, enumerable: true },
    status: { value: status, enumerable: true },
  }) as ReadableSpan
}

/** Hands each ended span to `next` (the exporting processor) redacted. */
export class RedactingSpanProcessor implements SpanProcessor {
  readonly #next: SpanProcessor

  constructor(next: SpanProcessor) {
    this.#next = next
  }

  onStart(span: Span, parentContext: Context): void {
    this.#next.onStart(span, parentContext)
  }

  onEnd(span: ReadableSpan): void {
    this.#next.onEnd(redactedSpan(span))
  }

  forceFlush(): Promise<void> {
    return this.#next.forceFlush()
  }

  shutdown(): Promise<void> {
    return this.#next.shutdown()
  }
}
