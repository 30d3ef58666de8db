/**
 * The SDK as platform/telemetry.ts sets it up, seen from the spans it exports (DATA_DIR/traces):
 * - sampling is parent-based (TRACE_SAMPLE_RATIO for traces started here, here 0): a caller's
 *   sampled `traceparent` is traced, an unsampled one and a request without one are not;
 * - the resource names the service (OTEL_SERVICE_NAME), its version (here from
 *   OTEL_RESOURCE_ATTRIBUTES) and this process's instance;
 * - a handler's span is named after its route, not after the plugin that registered it;
 * - a credential in the request's URL never reaches the exported span.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startTelemetry, stopTelemetry } from '@lsv/shared/platform/telemetry.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'lsv-sampling-'))
const saved = { name: process.env.OTEL_SERVICE_NAME, attributes: process.env.OTEL_RESOURCE_ATTRIBUTES }
afterAll(() => {
  process.env.OTEL_SERVICE_NAME = saved.name
  process.env.OTEL_RESOURCE_ATTRIBUTES = saved.attributes
  if (saved.name === undefined) delete process.env.OTEL_SERVICE_NAME
  if (saved.attributes === undefined) delete process.env.OTEL_RESOURCE_ATTRIBUTES
  rmSync(dataDir, { recursive: true, force: true })
})

const traceparent = (traceId: string, flags: '00' | '01') => `00-${traceId}-${randomBytes(8).toString('hex')}-${flags}`

describe('sampling, resource and span names', () => {
  it('honours a sampled traceparent only, names the resource and the handler, and keeps the token out', async () => {
    process.env.OTEL_SERVICE_NAME = 'renamed-service'
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'service.version=9.9.9,deployment.environment=test'
    await startTelemetry('sampling-test', { TRACE_EXPORTER: 'file', DATA_DIR: dataDir, TRACE_SAMPLE_RATIO: '0' })
    // imported after the SDK, as server.ts does: @fastify/otel instruments instances created from now on
    const { default: fastify } = await import('fastify')
    const app = fastify()
    await app.register(async function documentationPlugin(scope) {
      scope.get('/things/:id', async () => ({ ok: true }))
    })
    const sampled = randomBytes(16).toString('hex')
    const unsampled = randomBytes(16).toString('hex')
    const token = `lst_${randomBytes(18).toString('base64url')}`
    await app.inject({ url: `/things/a?token=${token}`, headers: { traceparent: traceparent(sampled, '01') } })
    await app.inject({ url: '/things/b', headers: { traceparent: traceparent(unsampled, '00') } })
    await app.inject({ url: '/things/c' }) // no caller's trace: started here at ratio 0
    await app.close()
    await stopTelemetry() // flushes

    const text = readFileSync(join(dataDir, 'traces', 'sampling-test.jsonl'), 'utf8')
    const spans = text
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { traceId: string; name: string; service: string; version: string; instance: string; attributes: Record<string, unknown> })
    // mutation: AlwaysOnSampler (the sampler before) exports the other two requests' spans too
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([sampled]))
    // mutation: @fastify/otel's own naming gives `handler - documentationPlugin`
    expect(spans.map((s) => s.name)).toContain('handler - GET /things/:id')
    // mutation: a resource of service.name alone has no version and no instance
    expect(spans[0]).toMatchObject({ service: 'renamed-service', version: '9.9.9', instance: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    // mutation: without the redacting processor, url.path holds the token
    expect(text).toContain('/things/a?token=[redacted]')
    expect(text).not.toContain(token)
  })
})
