import { afterAll, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { DatabaseSync } from 'node:sqlite'
import { join } from 'node:path'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { RELIABILITY_TENANT, type Injectable } from './support/requests.ts'
import { freePort, startNode, waitHealthy, signal } from './support/processes.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 2: SIGTERM while 8 MiB pushes are in flight. The edge-ingest server runs as its own
 * process (services/edge-ingest/src/server.ts) on a DATA_DIR whose tenant was set up through the
 * management API in this process. Bodies are streamed in 512 KiB chunks so they are still
 * arriving when the signal lands. Pass: every request gets an HTTP response (no reset), every
 * 202 has its batch on the queue (read from the embedded queue's table after the exit), and the
 * process exits within 10 s of SIGTERM.
 */

const IN_FLIGHT = 6
const BODY_LIMIT = 8 * 1024 * 1024

/** A push body just under the 8 MiB cap with fewer than 10,000 records. */
function bigBody(tag: string): Buffer {
  const pad = 'p'.repeat(760)
  const records: string[] = []
  let size = '{"contacts":[]}'.length
  for (let i = 0; i < 9_900; i++) {
    const r = JSON.stringify({ external_id: `${tag}-${i}`, email: `${tag}-${i}@example.com`, notes: pad })
    if (size + r.length + 1 > BODY_LIMIT - 1024) break
    records.push(r)
    size += r.length + 1
  }
  return Buffer.from(`{"contacts":[${records.join(',')}]}`)
}

/** POSTs `body` in chunks with pauses; resolves with the status or the transport error. */
function streamPush(
  port: number,
  t: ManagedTenant,
  body: Buffer,
  chunk: number,
  pauseMs: number,
): Promise<{ status: number | null; error: string | null; body: string }> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/contacts',
        method: 'POST',
        headers: { host: t.host, authorization: `Bearer ${t.key}`, 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        let text = ''
        res.on('data', (d: Buffer) => {
          text += d.toString()
        })
        res.on('end', () => resolve({ status: res.statusCode ?? null, error: null, body: text }))
        res.on('error', (e) => resolve({ status: res.statusCode ?? null, error: e.message, body: text }))
      },
    )
    req.on('error', (e) => resolve({ status: null, error: (e as NodeJS.ErrnoException).code ?? e.message, body: '' }))
    let off = 0
    const next = () => {
      if (off >= body.length) return void req.end()
      const piece = body.subarray(off, off + chunk)
      off += chunk
      if (req.destroyed) return
      req.write(piece, () => setTimeout(next, pauseMs))
    }
    next()
  })
}

describe('reliability 2: graceful shutdown of edge-ingest', () => {
  const data = tempDataDir('lsv-rel-shutdown-')
  afterAll(() => data.cleanup())

  it('SIGTERM during in-flight 8 MiB pushes: every request answered, every 202 queued, exit within 10 s', async () => {
    const env = {
      DATA_DIR: data.dir,
      OPERATOR_TOKEN: 'test-operator-token',
      KEY_PEPPER: 'test-key-pepper',
      STORE_BACKEND: 'embedded',
      QUEUE_BACKEND: 'embedded',
    }
    const setup = await createTestDeps({ env })
    const portal = (await buildPortal(setup)) as unknown as Injectable
    const tenant = await createTestTenant({ managementApi: portal, deps: setup }, RELIABILITY_TENANT)
    await portal.close()
    await setup.close()

    const port = await freePort()
    const edge = startNode('services/edge-ingest/src/server.ts', { ...env, PORT: String(port) })
    try {
      await waitHealthy(edge, [port])
      const bodies = Array.from({ length: IN_FLIGHT }, (_, i) => bigBody(`b${i}`))
      // ~16 chunks of 512 KiB, 60 ms apart: each body takes about a second to arrive
      const pushes = bodies.map((b) => streamPush(port, tenant, b, 512 * 1024, 60))
      await new Promise((r) => setTimeout(r, 350))
      const termAt = Date.now()
      signal(edge, 'SIGTERM')
      const results = await Promise.all(pushes)
      const code = await edge.exited
      const exitMs = edge.exitedAt()! - termAt

      const db = new DatabaseSync(join(data.dir, 'platform.db'), { readOnly: true })
      const queued = (db.prepare("SELECT count(*) AS n FROM queue_messages WHERE topic = 'contact-batches'").get() as { n: number }).n
      db.close()
      const accepted = results.filter((r) => r.status === 202).length
      const unanswered = results.filter((r) => r.status === null)
      printFigure(
        'graceful-shutdown',
        `${results.length - unanswered.length}/${results.length} in-flight 8 MiB pushes answered (${accepted} x 202, statuses ${results.map((r) => r.status).join(',')}), ${queued} batches queued, exit ${code} ${exitMs} ms after SIGTERM`,
      )
      expect(unanswered.map((r) => r.error)).toEqual([])
      expect(queued).toBe(accepted)
      expect(accepted).toBeGreaterThan(0)
      for (const r of results.filter((x) => x.status !== 202)) expect(r.status, r.body).toBe(503)
      expect(exitMs).toBeLessThanOrEqual(10_000)
      expect(code).toBe(0)
    } finally {
      signal(edge, 'SIGKILL')
    }
  })
})
