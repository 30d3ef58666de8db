import { SpanKind, trace, type Context } from '@opentelemetry/api'
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base'

/**
 * Refused requests are not traced (issue 28, item 8): a request answered with a refusal of its
 * caller (a missing or wrong credential, a credential without the permission, nothing to serve
 * (an unknown tenant's subdomain, an unknown path), another method, a body over the cap, a rate
 * limit) or with any client error on a path no route serves exports no span, even when its caller
 * sent a sampled `traceparent`. Only a caller we know and serve gets
 * its sampling decision honoured; unknown callers cannot spend the project's Cloud Trace quota
 * (docs/capacity.md, "Traces"), which is what an anonymous flood would otherwise do.
 * `TRACE_REFUSED_REQUESTS=true` turns this off (telemetry.ts installs no filter then).
 *
 * Why a processor: the sampler decides when a request's first span starts, before anything is
 * known of the caller, and starting the request's span only after authentication would leave the
 * HTTP instrumentation's server span (and the time before authentication) out of every kept
 * trace. The answer's status is known when the request's own span ends, so the spans of each
 * request are held here until then (a few milliseconds) and handed on, or dropped, together.
 * Only sampled spans reach a processor: an unsampled request costs nothing here.
 *
 * A request's spans are those started under its local root, the SERVER span of an incoming
 * request (the HTTP instrumentation's, or @fastify/otel's when the HTTP server is not
 * instrumented, as with `inject`); a span that ends after its request's root follows the
 * decision already made. A routed answer other than the refusals above (a tenant's 400 for its
 * body, a 409, every 5xx) is traced like a 2xx. A 404 is dropped even on a route: most are an
 * unknown subdomain (the edge's answer to a made-up tenant), which is what a scan sends.
 */

/** statuses that refuse the caller, whatever the route (contract/errors.ts) */
const REFUSALS = new Set([401, 403, 404, 405, 413, 429])

/** whether a request answered `status` (on a route, or on none) is one whose spans are dropped */
function isRefusedAnswer(status: number, routed: boolean): boolean {
  return REFUSALS.has(status) || (!routed && status >= 400 && status < 500)
}

interface RequestSpans {
  /** the request's local root: its span ends last, with the answer's status */
  root: object
  /** the request's spans ended so far; null once the root ended and the decision is made */
  held: ReadableSpan[] | null
  keep: boolean
}

function statusOf(span: ReadableSpan): number | undefined {
  // the stable semantic conventions' name, else the old one the HTTP instrumentation writes by default
  const status = span.attributes['http.response.status_code'] ?? span.attributes['http.status_code']
  return typeof status === 'number' ? status : undefined
}

/** Hands on the spans of every request that was not refused, each request's spans once it ends. */
export class RefusedRequestFilter implements SpanProcessor {
  readonly #next: SpanProcessor
  /** span → its request (a WeakMap: a span that never ends takes its entry with it) */
  readonly #requestOf = new WeakMap<object, RequestSpans>()

  constructor(next: SpanProcessor) {
    this.#next = next
  }

  onStart(span: Span, parentContext: Context): void {
    const parent = trace.getSpan(parentContext)
    const request = parent ? this.#requestOf.get(parent) : undefined
    if (request) this.#requestOf.set(span, request)
    else if (span.kind === SpanKind.SERVER) this.#requestOf.set(span, { root: span, held: [], keep: true })
    this.#next.onStart(span, parentContext)
  }

  onEnd(span: ReadableSpan): void {
    const request = this.#requestOf.get(span)
    if (!request) {
      this.#next.onEnd(span)
      return
    }
    if (request.held === null) {
      if (request.keep) this.#next.onEnd(span)
      return
    }
    if (span !== request.root) {
      request.held.push(span)
      return
    }
    const status = statusOf(span)
    request.keep = status === undefined || !isRefusedAnswer(status, span.attributes['http.route'] !== undefined)
    const held = request.held
    request.held = null
    if (!request.keep) return
    for (const s of held) this.#next.onEnd(s)
    this.#next.onEnd(span)
  }

  forceFlush(): Promise<void> {
    return this.#next.forceFlush()
  }

  shutdown(): Promise<void> {
    return this.#next.shutdown()
  }
}
