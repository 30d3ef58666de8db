/**
 * The span processor that applies the redaction policy (platform/telemetry-redaction.ts), on spans
 * made by the real SDK: a span that carries a credential reaches the exporter as a redacted view
 * (the SDK's span untouched), and a span that carries none reaches it as it is, with no view made
 * (a delivery's two spans, each delivery: a view cost every exporter's read of it).
 * The end-to-end proof across every sink is redaction-sinks.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { RedactingSpanProcessor } from '@lsv/shared/platform/telemetry-redaction.ts'

/** a tracer whose ended spans pass the redaction processor into `exported` */
function tracing() {
  const exported: ReadableSpan[] = []
  const sink: SpanProcessor = { onStart() {}, onEnd: (s) => void exported.push(s), forceFlush: async () => {}, shutdown: async () => {} }
  const ended: ReadableSpan[] = []
  const redacting = new RedactingSpanProcessor(sink)
  const watch: SpanProcessor = {
    onStart: (s, c) => redacting.onStart(s, c),
    onEnd: (s) => {
      ended.push(s)
      redacting.onEnd(s)
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  }
  const tracer = new BasicTracerProvider({ spanProcessors: [watch] }).getTracer('test')
  return { tracer, exported, ended }
}

const token = `lst_${'a1B2c3D4e5F6g7H8'.repeat(2)}`

describe('span redaction', () => {
  it('hands on a span that holds no credential as it is: a delivery’s task span and its POST to the receiver', () => {
    const { tracer, exported, ended } = tracing()
    const task = tracer.startSpan('task run', {
      kind: SpanKind.CONSUMER,
      attributes: { 'lsv.task.queue': `webhook-int-${Math.random().toString(36).slice(2)}` },
    })
    const post = tracer.startSpan(
      'POST',
      {
        kind: SpanKind.CLIENT,
        attributes: { 'http.request.method': 'POST', 'url.full': 'https://hooks.example/in', 'url.path': '/in', 'url.query': '', 'server.port': 443 },
      },
      trace.setSpan(context.active(), task),
    )
    post.addEvent('sent', { 'note.text': 'plain words' })
    post.setStatus({ code: SpanStatusCode.ERROR, message: 'connection reset' })
    post.end()
    task.end()
    expect(exported).toHaveLength(2)
    expect(exported[0]).toBe(ended[0])
    expect(exported[1]).toBe(ended[1])
  })

  it('hands on a redacted view of a span that holds one, and leaves the span itself as the SDK made it', () => {
    const { tracer, exported, ended } = tracing()
    const url = `https://user:pw-${Math.random().toString(36).slice(2)}@hooks.example/in?sig=abc`
    const span = tracer.startSpan(`GET /s?token=${token}`, {
      kind: SpanKind.CLIENT,
      attributes: { 'url.full': url, 'url.query': 'sig=abc', 'server.port': 443 },
    })
    span.addEvent('retry', { 'error.text': `refused ${token}` })
    span.setStatus({ code: SpanStatusCode.ERROR, message: `bad token ${token}` })
    span.end()
    const [view] = exported
    expect(view).not.toBe(ended[0])
    const text = JSON.stringify({ name: view!.name, attributes: view!.attributes, events: view!.events, status: view!.status })
    expect(text).not.toContain(token)
    expect(text).not.toContain(url)
    expect(text).not.toContain('sig=abc')
    expect(view!.attributes['server.port']).toBe(443)
    expect(view!.spanContext().spanId).toBe(ended[0]!.spanContext().spanId)
    // the SDK's span is not rewritten
    expect(ended[0]!.attributes['url.full']).toBe(url)
    expect(ended[0]!.status.message).toContain(token)
  })
})
