/**
 * Traces across every hop, on the deployed shape (`npm run start:cloud`, issue 23): each service
 * exports its spans to a small OTLP/HTTP receiver this test runs (OTEL_EXPORTER_OTLP_ENDPOINT), and
 * - one push gives one trace holding the edge's request, the publish, the worker's handling and
 *   the change (the change row's trace_id is that trace);
 * - one visit gives one trace through the visits publish, the dispatcher's handling, the Cloud
 *   Tasks task (/tasks/deliver) and the delivery attempt: the receiver's request carries its
 *   `traceparent`, the delivery record keeps its id, and the dispatcher's "webhook delivered" line
 *   names it for Cloud Logging.
 * Each hop is asynchronous (Pub/Sub push through the relay, a task through the Cloud Tasks
 * stand-in), so each assertion below fails when that hop's propagation is removed.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Firestore } from '@google-cloud/firestore'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { deliveryIdFor } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { pullMessages } from '../../scripts/lib/cloud/pubsub-setup.ts'
import { emulators, randomSuffix } from '../helpers/embedded.ts'
import { startReceiver } from '../outbound/harness.ts'
import { cleanUp, pushContacts, sleep, startCloud, stopCloud, waitForBanner, type CloudRun } from './support.ts'

afterAll(cleanUp, 60_000)

interface ExportedSpan {
  service: string
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  attributes: Record<string, unknown>
}

/** an OTLP id as the JSON encoding carries it: hex (the JS exporter's) or base64 (the spec's) */
const hexOf = (id: unknown): string =>
  typeof id !== 'string' || id === '' ? '' : /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex')

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean }
const anyValue = (v: AnyValue | undefined) => v?.stringValue ?? v?.intValue ?? v?.boolValue

/** A collector that keeps every span of every ExportTraceServiceRequest (OTLP/HTTP JSON) posted to /v1/traces. */
async function startOtlpReceiver(): Promise<{ endpoint: string; spans: ExportedSpan[]; close(): Promise<void> }> {
  const spans: ExportedSpan[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.url === '/v1/traces' && String(req.headers['content-type']).includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: Array<{
            resource?: { attributes?: Array<{ key: string; value: AnyValue }> }
            scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>
          }>
        }
        for (const rs of body.resourceSpans ?? []) {
          const service = String(anyValue(rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value) ?? '')
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) {
              spans.push({
                service,
                traceId: hexOf(s.traceId),
                spanId: hexOf(s.spanId),
                parentSpanId: hexOf(s.parentSpanId),
                name: String(s.name),
                kind: Number(s.kind),
                attributes: Object.fromEntries(((s.attributes as Array<{ key: string; value: AnyValue }>) ?? []).map((a) => [a.key, anyValue(a.value)])),
              })
            }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined> | T | null | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const v = await probe()
    if (v !== null && v !== undefined && v !== false) return v
    await sleep(250)
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`)
}

/** OTLP span kinds (the JSON encoding's enum) */
const SERVER = 2
const CLIENT = 3
const PRODUCER = 4
const CONSUMER = 5

const describeTrace = (spans: ExportedSpan[]) => spans.map((s) => `${s.service} kind=${s.kind} ${s.name}`).join('\n')

const skip = !emulators.firestore || !emulators.pubsub

describe.skipIf(skip)('traces across every hop (start:cloud, OTLP)', () => {
  it('one push is one trace from the edge to the change row; one visit is one trace to the delivery attempt', async () => {
    const otlp = await startOtlpReceiver()
    let run: CloudRun | null = null
    const receiver = await startReceiver()
    try {
      run = await startCloud({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint } })
      const c = await waitForBanner(run)

      // ---- one push ----
      const externalId = `trace-${randomSuffix(6)}`
      const pushed = await pushContacts(
        run,
        c,
        JSON.stringify({ contacts: [{ external_id: externalId, email: `${externalId}@example.com`, first_name: 'Grace', last_name: 'Hopper' }] }),
      )
      expect(pushed.status, pushed.body).toBe(202)
      const contactId = contactIdFor(c.account_id, c.api_source, externalId)
      const row = await until('change row', async () => {
        const messages = await pullMessages(emulators.pubsub!, run!.project, 'contact-changes-bigquery')
        return messages.map((m) => JSON.parse(m.data) as Record<string, unknown>).find((r) => r.contact_id === contactId)
      })
      // mutation: toChangeRow without activeTraceId() (trace_id null) fails here
      expect(row.trace_id, JSON.stringify(row)).toMatch(/^[0-9a-f]{32}$/)
      const pushTrace = row.trace_id as string
      const pushSpans = await until('the push trace, every hop', () => {
        const spans = otlp.spans.filter((s) => s.traceId === pushTrace)
        const has = (service: string, kind: number, name?: RegExp) =>
          spans.some((s) => s.service === service && s.kind === kind && (!name || name.test(s.name)))
        return has('edge-ingest', SERVER) &&
          has('edge-ingest', PRODUCER) &&
          has('upsert-worker', CONSUMER, /contact-batches process/) &&
          has('upsert-worker', PRODUCER)
          ? spans
          : null
      }).catch((err: Error) => {
        throw new Error(`${err.message}\nspans of ${pushTrace}:\n${describeTrace(otlp.spans.filter((s) => s.traceId === pushTrace))}`)
      })
      // the edge's request span is the root: the trace began at the push (mutation: the worker's
      // push endpoint without inMessageSpan puts its handling, and so the change row, in the
      // relay's request trace, and none of the edge's spans are in pushTrace)
      const edgeRequest = pushSpans.find((s) => s.service === 'edge-ingest' && s.kind === SERVER)!
      expect(edgeRequest.parentSpanId, describeTrace(pushSpans)).toBe('')
      // the worker's handling hangs under a span of the edge (the Pub/Sub client's publish span)
      const handling = pushSpans.find((s) => s.service === 'upsert-worker' && s.kind === CONSUMER)!
      expect(pushSpans.find((s) => s.spanId === handling.parentSpanId)?.service, describeTrace(pushSpans)).toBe('edge-ingest')

      // ---- one visit ----
      const admin = `http://127.0.0.1:${run.ports.portal}/api/v1/admin/accounts/${c.account_id}`
      const operator = { authorization: `Bearer ${c.operator_token}`, 'content-type': 'application/json' }
      const created = await fetch(`${admin}/integrations`, {
        method: 'POST',
        headers: operator,
        body: JSON.stringify({ url: receiver.url, payload_version: 2 }),
      })
      expect(created.status, await created.clone().text()).toBe(201)
      const { id: integrationId } = (await created.json()) as { id: string }
      const minted = await fetch(`http://127.0.0.1:${run.ports.portal}/api/contacts/links`, {
        method: 'POST',
        headers: { authorization: `Bearer ${c.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ source: c.api_source, externalId, destinationUrl: 'https://example.com/pricing' }),
      })
      expect(minted.status, await minted.clone().text()).toBeLessThan(300)
      const link = ((await minted.json()) as { link: string }).link
      const visitId = `vis_${randomSuffix(8)}`
      const visit = await fetch(`${admin}/visits`, {
        method: 'POST',
        headers: operator,
        body: JSON.stringify({ id: visitId, tier: 'person', visit: { captured_url: link }, lsv: new URL(link).searchParams.get('lsv') }),
      })
      expect(visit.status, await visit.clone().text()).toBe(202)
      const delivered = await until('the delivery', () => receiver.requests[0], 90_000)
      // the receiver's request carries the attempt's trace context (undici instrumentation)
      const traceparent = String(delivered.headers.traceparent ?? '')
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
      const visitTrace = traceparent.split('-')[1]!
      expect(visitTrace).not.toBe(pushTrace)

      const visitSpans = await until('the visit trace, every hop', () => {
        const spans = otlp.spans.filter((s) => s.traceId === visitTrace)
        const has = (service: string, kind: number, name?: RegExp) =>
          spans.some((s) => s.service === service && s.kind === kind && (!name || name.test(s.name)))
        return has('portal-api', SERVER) &&
          has('portal-api', PRODUCER) &&
          has('webhook-dispatcher', CONSUMER, /visit-events process/) &&
          spans.some(
            (s) =>
              s.service === 'webhook-dispatcher' &&
              s.kind === SERVER &&
              String(s.attributes['url.path'] ?? s.attributes['http.target'] ?? s.name).includes('/tasks/deliver'),
          ) &&
          has('webhook-dispatcher', CLIENT)
          ? spans
          : null
      }).catch((err: Error) => {
        throw new Error(`${err.message}\nspans of ${visitTrace}:\n${describeTrace(otlp.spans.filter((s) => s.traceId === visitTrace))}`)
      })
      // mutation: the Cloud Tasks adapter without the `traceparent` header starts /tasks/deliver
      // (and the attempt) in a trace of its own: the visit's request would not be in visitTrace
      expect(visitSpans.find((s) => s.service === 'portal-api' && s.kind === SERVER)?.parentSpanId, describeTrace(visitSpans)).toBe('')

      // the delivery record keeps the visit's trace (mutation: createDelivery without trace_id)
      const fs = new Firestore({ projectId: run.project })
      try {
        const record = await fs.collection('deliveries').doc(deliveryIdFor(visitId, integrationId)).get()
        expect(record.data()?.trace_id).toBe(visitTrace)
      } finally {
        await fs.terminate()
      }
      // the dispatcher's delivered line names the trace, for Cloud Logging and in plain sight
      const line = await until('webhook delivered line', () =>
        readFileSync(join(run!.dataDir, 'logs', 'webhook-dispatcher.log'), 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.event === 'webhook_delivery' && l.eventId === visitId),
      )
      expect(line).toMatchObject({ traceId: visitTrace, 'logging.googleapis.com/trace': `projects/${run.project}/traces/${visitTrace}` })
    } finally {
      await receiver.close()
      if (run) expect((await stopCloud(run)).code).toBe(0)
      await otlp.close()
    }
  }, 300_000)
})
