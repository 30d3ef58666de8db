/**
 * The span processor that applies the redaction policy (platform/telemetry-redaction.ts), on ended
 * spans shaped as the SDK and the undici instrumentation make them: a span that carries a
 * credential reaches the exporter as a redacted view (the span itself untouched), and a span that
 * carries none reaches it as it is, with no view made (a delivery's two spans, each delivery: a
 * view made every exporter's read of it slower).
 * The end-to-end proof across every sink is redaction-sinks.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api'
import { RedactingSpanProcessor } from '@lsv/shared/platform/telemetry-redaction.ts'

type Ended = Parameters<RedactingSpanProcessor['onEnd']>[0]

/** an ended span as the SDK hands it to a processor (the fields the redaction reads, and its context) */
function endedSpan(name: string, kind: SpanKind, attributes: Attributes, more: Partial<Pick<Ended, 'events' | 'status'>> = {}): Ended {
  const spanId = Math.random().toString(16).slice(2, 18).padEnd(16, '0')
  return {
    name,
    kind,
    attributes,
    events: more.events ?? [],
    status: more.status ?? { code: SpanStatusCode.UNSET },
    spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId, traceFlags: 1 }),
  } as unknown as Ended
}

/** the redaction processor, handing what it exports to `exported` */
function redacting() {
  const exported: Ended[] = []
  const processor = new RedactingSpanProcessor({ onStart() {}, onEnd: (s) => void exported.push(s), forceFlush: async () => {}, shutdown: async () => {} })
  return { processor, exported }
}

const token = `lst_${'a1B2c3D4e5F6g7H8'.repeat(2)}`

describe('span redaction', () => {
  it('hands on a span that holds no credential as it is: a delivery’s task span and its POST to the receiver', () => {
    const { processor, exported } = redacting()
    const task = endedSpan('task run', SpanKind.CONSUMER, { 'lsv.task.queue': `webhook-int-${Math.random().toString(36).slice(2)}` })
    const post = endedSpan(
      'POST',
      SpanKind.CLIENT,
      { 'http.request.method': 'POST', 'url.full': 'https://hooks.example/in', 'url.path': '/in', 'url.query': '', 'server.port': 443 },
      {
        events: [{ name: 'sent', time: [0, 0], attributes: { 'note.text': 'plain words' } }],
        status: { code: SpanStatusCode.ERROR, message: 'connection reset' },
      },
    )
    processor.onEnd(post)
    processor.onEnd(task)
    expect(exported).toHaveLength(2)
    expect(exported[0]).toBe(post)
    expect(exported[1]).toBe(task)
  })

  it('hands on a redacted view of a span that holds one, and leaves the span itself as it was', () => {
    const { processor, exported } = redacting()
    const url = `https://user:pw-${Math.random().toString(36).slice(2)}@hooks.example/in?sig=abc`
    const span = endedSpan(
      `GET /s?token=${token}`,
      SpanKind.CLIENT,
      { 'url.full': url, 'url.query': 'sig=abc', 'server.port': 443 },
      {
        events: [{ name: 'retry', time: [0, 0], attributes: { 'error.text': `refused ${token}` } }],
        status: { code: SpanStatusCode.ERROR, message: `bad token ${token}` },
      },
    )
    processor.onEnd(span)
    const [view] = exported
    expect(view).not.toBe(span)
    const text = JSON.stringify({ name: view!.name, attributes: view!.attributes, events: view!.events, status: view!.status })
    expect(text).not.toContain(token)
    expect(text).not.toContain(url)
    expect(text).not.toContain('sig=abc')
    expect(view!.attributes['server.port']).toBe(443)
    expect(view!.spanContext().spanId).toBe(span.spanContext().spanId)
    // the span itself is not rewritten
    expect(span.attributes['url.full']).toBe(url)
    expect(span.status.message).toContain(token)
  })
})
