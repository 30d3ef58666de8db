import { trace, TraceFlags, type Context, type TextMapGetter, type TextMapPropagator, type TextMapSetter } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { randomBytes } from 'node:crypto'
import { traceContextOf } from '../logging/trace.ts'

/**
 * The HTTP propagator: W3C `traceparent` in and out, and on the way in `X-Cloud-Trace-Context`
 * when `traceparent` is absent or malformed, the same order logging/trace.ts reads them in, so a
 * request's log lines and its span name one trace. Google's front end sets both on a request to
 * Cloud Run; an older client may send only the Cloud one. A Cloud header without a span (`<trace>`
 * or `<trace>;o=1`) gets a random parent span id: the trace is continued, the parent is unknown.
 * Hand-written because `@google-cloud/opentelemetry-cloud-trace-propagator` drops a header without
 * a span (and warns at every start that it is deprecated, archived after 30 October 2026).
 */
export class CloudTracePropagator implements TextMapPropagator {
  readonly #w3c = new W3CTraceContextPropagator()

  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    this.#w3c.inject(context, carrier, setter)
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const headers = {
      traceparent: getter.get(carrier, 'traceparent'),
      'x-cloud-trace-context': getter.get(carrier, 'x-cloud-trace-context'),
    }
    const found = traceContextOf(headers)
    if (!found) return context
    if (headers.traceparent !== undefined && trace.getSpanContext(this.#w3c.extract(context, carrier, getter))) {
      return this.#w3c.extract(context, carrier, getter) // keeps tracestate
    }
    return trace.setSpanContext(context, {
      traceId: found.traceId,
      spanId: found.spanId ?? randomBytes(8).toString('hex'),
      traceFlags: found.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      isRemote: true,
    })
  }

  fields(): string[] {
    return [...this.#w3c.fields(), 'x-cloud-trace-context']
  }
}
