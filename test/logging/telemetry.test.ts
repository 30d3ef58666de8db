/**
 * The trace plumbing in one process, with the real SDK set-up (platform/telemetry.ts, the file
 * exporter): a published message's `traceparent` attribute puts its handling in the publisher's
 * trace, a message without one is still handled, log lines name the active span's trace, an
 * incoming X-Cloud-Trace-Context is continued, and the spans land in DATA_DIR/traces as JSON lines.
 * The end-to-end proof across processes is test/cloud/traces.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api'
import { startTelemetry, stopTelemetry, traceExporterKind } from '@lsv/shared/platform/telemetry.ts'
import { CloudTracePropagator } from '@lsv/shared/platform/telemetry-propagator.ts'
import { activeTraceId, inMessageSpan, TRACE_ATTRIBUTE, withTraceparent } from '@lsv/shared/logging/trace-propagation.ts'
import { setTraceProject, traceMixin } from '@lsv/shared/logging/trace-scope.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'lsv-telemetry-'))
const headerGetter = { keys: (c: Record<string, string>) => Object.keys(c), get: (c: Record<string, string>, k: string) => c[k] }

beforeAll(async () => {
  await startTelemetry('unit-test', { TRACE_EXPORTER: 'file', DATA_DIR: dataDir })
  setTraceProject('demo-project')
})
afterAll(() => {
  setTraceProject(null)
  rmSync(dataDir, { recursive: true, force: true })
})

describe('trace context across a queue hop, in one process', () => {
  it('a message published in a span is handled in that span’s trace, and its log lines name it; the spans are written to DATA_DIR/traces', async () => {
    const tracer = trace.getTracer('test')
    const published = await tracer.startActiveSpan('publish', async (span) => {
      const attributes = withTraceparent({ v: '1' })
      span.end()
      return { attributes, traceId: span.spanContext().traceId, spanId: span.spanContext().spanId }
    })
    expect(published.attributes[TRACE_ATTRIBUTE]).toBe(`00-${published.traceId}-${published.spanId}-01`)
    // outside any span, as a consumer is: the handling continues the publisher's trace
    // (mutation: contextOfAttributes ignoring the attribute gives the handling a trace of its own)
    const handled = await inMessageSpan('contact-batches', { id: 'm-1', attributes: published.attributes }, async () => ({
      traceId: activeTraceId(),
      log: traceMixin({}, 30),
    }))
    expect(handled.traceId).toBe(published.traceId)
    // mutation: traceMixin without the active span's fields (the scope's only) names no trace here
    expect(handled.log['logging.googleapis.com/trace']).toBe(`projects/demo-project/traces/${published.traceId}`)

    // a message from before traces (no attribute) is handled all the same, in a trace of its own
    const old = await inMessageSpan('contact-batches', { id: 'm-2', attributes: { v: '1' } }, async () => activeTraceId())
    expect(old).toMatch(/^[0-9a-f]{32}$/)
    expect(old).not.toBe(published.traceId)
    // an attribute already there is kept (a dead letter re-published keeps its original trace)
    expect(withTraceparent({ traceparent: 'kept' }).traceparent).toBe('kept')
    // the client's own attribute is the client's to write (it warns when one is already there)
    expect(withTraceparent({ traceparent: 'kept', googclient_traceparent: 'old' })).toEqual({ traceparent: 'kept' })

    await stopTelemetry() // flushes
    const lines = readFileSync(join(dataDir, 'traces', 'unit-test.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const handling = lines.find((l) => l.name === 'contact-batches process' && l.traceId === published.traceId)
    expect(handling, JSON.stringify(lines)).toMatchObject({ parentSpanId: published.spanId, service: 'unit-test' })
  })

  it('continues traceparent, else X-Cloud-Trace-Context (with or without a span), as the log fields read them', () => {
    const p = new CloudTracePropagator()
    const w3c = trace.getSpanContext(p.extract(ROOT_CONTEXT, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, headerGetter))
    expect(w3c).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', isRemote: true })
    // a malformed traceparent falls back to the Cloud header (mutation: W3C only gives no context)
    const cloud = trace.getSpanContext(
      p.extract(ROOT_CONTEXT, { traceparent: 'garbage', 'x-cloud-trace-context': '105445AA7843BC8BF206B12000100000/1;o=1' }, headerGetter),
    )
    expect(cloud).toMatchObject({ traceId: '105445aa7843bc8bf206b12000100000', spanId: '0000000000000001', traceFlags: 1 })
    const noSpan = trace.getSpanContext(p.extract(ROOT_CONTEXT, { 'x-cloud-trace-context': '105445aa7843bc8bf206b12000100000' }, headerGetter))
    expect(noSpan?.traceId).toBe('105445aa7843bc8bf206b12000100000')
    expect(trace.isSpanContextValid(noSpan!)).toBe(true)
    expect(trace.getSpanContext(p.extract(ROOT_CONTEXT, {}, headerGetter))).toBeUndefined()
    // injects W3C only
    const out: Record<string, string> = {}
    p.inject(trace.setSpanContext(context.active(), w3c!), out, { set: (c, k, v) => ((c as Record<string, string>)[k] = v) })
    expect(out).toEqual({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })
  })

  it('chooses the exporter: OTLP when an endpoint is set, Cloud Trace in production, else a file; none under test', () => {
    expect(traceExporterKind({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', NODE_ENV: 'production' })).toBe('otlp')
    expect(traceExporterKind({ NODE_ENV: 'production' })).toBe('cloud-trace')
    expect(traceExporterKind({ NODE_ENV: 'production', LOCAL_WIRING: 'true' })).toBe('file')
    expect(traceExporterKind({})).toBe('file')
    expect(traceExporterKind({ NODE_ENV: 'test' })).toBe('none')
    expect(traceExporterKind({ NODE_ENV: 'production', TRACE_EXPORTER: 'none' })).toBe('none')
  })
})
