/**
 * Refused requests are not traced (issue 28, item 8), seen from the spans the real SDK set-up
 * (platform/telemetry.ts, the file exporter) writes while the edge app answers real HTTP:
 * every request below carries a sampled `traceparent` and TRACE_SAMPLE_RATIO is 0, so whatever
 * is traced is traced because the caller asked. A tenant's push is traced (202), and so is a
 * tenant's push answered 400 on its route; an anonymous push (401), a wrong key (401), a push to
 * a subdomain no tenant has (404) and a path no route serves (404) export no span, even though
 * their callers asked.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startTelemetry, stopTelemetry } from '@lsv/shared/platform/telemetry.ts'
import { untraced } from '@lsv/shared/logging/trace-propagation.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'lsv-refused-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** a new trace the caller marks sampled */
const sampledTrace = () => {
  const traceId = randomBytes(16).toString('hex')
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` }
}

/** A POST from outside any trace: the client's own instrumentation neither traces it nor replaces its traceparent. */
function post(port: number, path: string, headers: Record<string, string>, body: string): Promise<number> {
  return untraced(
    () =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode!))
        })
        req.on('error', reject)
        req.end(body)
      }),
  )
}

describe('refused requests are not traced', () => {
  it("a tenant's sampled push is traced; an anonymous, a wrongly keyed and an unrouted request are not, though sampled", async () => {
    await startTelemetry('refused-test', { TRACE_EXPORTER: 'file', DATA_DIR: dataDir, TRACE_SAMPLE_RATIO: '0' })
    // imported after the SDK, as server.ts does: @fastify/otel instruments instances created from now on
    const { createHarness } = await import('../ingest/support/harness.ts')
    const { createTestTenant } = await import('../helpers/tenant.ts')
    const h = await createHarness()
    const t = await createTestTenant(h.deps)
    const push = JSON.stringify({ contacts: [{ external_id: 'one', email: 'one@example.com', first_name: 'One' }] })
    const served = sampledTrace()
    const invalid = sampledTrace()
    const anonymous = sampledTrace()
    const wrongKey = sampledTrace()
    const unknownTenant = sampledTrace()
    const unrouted = sampledTrace()
    let statuses: number[]
    try {
      await h.edge.listen({ port: 0, host: '127.0.0.1' })
      const port = (h.edge.server.address() as AddressInfo).port
      statuses = [
        await post(port, '/v1/contacts', t.keyHeaders({ traceparent: served.traceparent }), push),
        await post(port, '/v1/contacts', t.keyHeaders({ traceparent: invalid.traceparent }), '{"contacts":"none"}'),
        await post(port, '/v1/contacts', { host: t.host, traceparent: anonymous.traceparent }, push),
        await post(
          port,
          '/v1/contacts',
          t.keyHeaders({ traceparent: wrongKey.traceparent, authorization: `Bearer lsk_${randomBytes(24).toString('hex')}` }),
          push,
        ),
        await post(
          port,
          '/v1/contacts',
          { host: `nobody-${randomBytes(4).toString('hex')}.${h.deps.config.edgeDomain}`, traceparent: unknownTenant.traceparent },
          push,
        ),
        await post(port, '/v1/nowhere', t.keyHeaders({ traceparent: unrouted.traceparent }), push),
      ]
    } finally {
      await t.cleanup()
      await h.close()
      await stopTelemetry() // flushes
    }
    expect(statuses).toEqual([202, 400, 401, 401, 404, 404])

    const spans = readFileSync(join(dataDir, 'traces', 'refused-test.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { traceId: string; name: string })
    const traced = new Set(spans.map((s) => s.traceId))
    // the served requests' whole trees: the request, its hooks and its handler
    expect(spans.filter((s) => s.traceId === served.traceId).map((s) => s.name)).toContain('handler - POST /v1/contacts')
    // mutation: a filter that drops every 4xx loses the tenant's 400, which its route answered
    expect(traced.has(invalid.traceId)).toBe(true)
    // mutation: without the filter (TRACE_REFUSED_REQUESTS=true) these four are exported too
    const refused = { anonymous, wrongKey, unknownTenant, unrouted }
    expect(Object.fromEntries(Object.entries(refused).map(([name, r]) => [name, traced.has(r.traceId)]))).toEqual({
      anonymous: false,
      wrongKey: false,
      unknownTenant: false,
      unrouted: false,
    })
  })
})
