import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DatabaseSync } from 'node:sqlite'
import { join } from 'node:path'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import type { RateLimiter } from '@lsv/shared/ports/rate-limiter.ts'
import { PUSH_WINDOWS } from '@lsv/shared/domain/ingest/rate-limit.ts'
import { body, createHarness, createIngestFixture, type Harness, type IngestFixture, record } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

const DAY_MS = 86_400_000

/** Section 8 rate limits with a controllable clock: 120 / 60 s and 50,000 / 24 h, per key, source and location. */
describe('push rate limits', () => {
  let h: Harness
  let t: StoredTenant
  // 10 s into a 60 s window, 10 s into a 24 h window
  const clock = new ManualClock(Math.floor(Date.UTC(2026, 8, 5) / DAY_MS) * DAY_MS + 10_000)
  type Op = {
    name: string
    send: (tenant: StoredTenant, headers?: Record<string, string>) => Promise<{ statusCode: number; headers: Record<string, unknown>; json(): any }>
  }
  const ops: Op[] = [
    {
      name: 'per API key (4.3)',
      send: (x, hd) => h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: { ...x.keyHeaders(), ...hd }, payload: body([record(1)]) }),
    },
    {
      name: 'per source (4.4)',
      send: (x, hd) =>
        h.edge.inject({
          method: 'POST',
          url: `/v1/contacts/${x.webhook.id}`,
          headers: { host: x.host, 'x-webhook-token': x.sourceToken, 'content-type': 'application/json', ...hd },
          payload: body([record(1)]),
        }),
    },
    {
      name: 'per location (4.5)',
      send: (x, hd) =>
        h.edge.inject({
          method: 'POST',
          url: '/v1/contacts/partnercrm',
          headers: { host: x.host, 'x-webhook-token': x.locationToken, 'content-type': 'application/json', ...hd },
          payload: JSON.stringify({ contactId: 'c', locationId: x.locationId }),
        }),
    },
  ]

  let fixture: IngestFixture
  beforeAll(async () => {
    ;({ h, t } = fixture = await createIngestFixture({ clock }))
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it("the windows are the contract's", () => {
    expect(PUSH_WINDOWS.map((w) => [w.limit, w.seconds])).toEqual([
      [120, 60],
      [50_000, 86_400],
    ])
  })

  for (const op of ops) {
    it(`${op.name}: 120 admitted per 60 s window, then 429 rate limited with Retry-After 60; the next window admits again`, async () => {
      const x = await createTestTenant(h.deps)
      try {
        for (let i = 0; i < 120; i++) expect((await op.send(x)).statusCode).toBe(202)
        for (let i = 0; i < 3; i++) {
          const res = await op.send(x)
          expect(res.statusCode).toBe(429)
          expect(res.json()).toEqual({ ok: false, error: 'rate limited' })
          expect(res.headers['retry-after']).toBe('60')
        }
        // another tenant's counter is untouched
        expect((await op.send(t)).statusCode).toBe(202)
        clock.advance(50_000) // the next 60 s window
        expect((await op.send(x)).statusCode).toBe(202)
      } finally {
        clock.set(Math.floor(clock.now() / DAY_MS) * DAY_MS + 10_000)
        await x.cleanup()
      }
    })
  }

  it('requests failing routing or authentication do not count', async () => {
    const x = await createTestTenant(h.deps)
    try {
      const start = Math.floor(clock.now() / 60_000) * 60_000
      clock.set(start + 60_000 + 1000)
      for (let i = 0; i < 150; i++) expect((await ops[0]!.send(x, { authorization: `Bearer lsk_${'x'.repeat(43)}` })).statusCode).toBe(401)
      for (let i = 0; i < 150; i++) expect((await ops[0]!.send(x, { host: `nobody-${x.publicId}.${h.deps.config.edgeDomain}` })).statusCode).toBe(404)
      for (let i = 0; i < 150; i++) expect((await ops[1]!.send(x, { 'x-webhook-token': 'wrong' })).statusCode).toBe(401)
      for (let i = 0; i < 150; i++) expect((await ops[2]!.send(x, { 'x-webhook-token': 'wrong' })).statusCode).toBe(401)
      for (const op of ops) {
        for (let i = 0; i < 120; i++) expect((await op.send(x)).statusCode, op.name).toBe(202)
        expect((await op.send(x)).statusCode, op.name).toBe(429)
      }
    } finally {
      await x.cleanup()
    }
  })

  it('24 h window: when 50,000 are used, 429 with Retry-After = the seconds left in that window', async () => {
    const x = await createTestTenant(h.deps)
    try {
      const dayStart = Math.floor(clock.now() / DAY_MS) * DAY_MS
      clock.set(dayStart + 3_600_000) // one hour into the day window
      expect((await ops[0]!.send(x)).statusCode).toBe(202)
      // the embedded limiter's counter of this key's 24 h window, set to the limit
      const db = new DatabaseSync(join(h.deps.config.dataDir, 'platform.db'))
      try {
        db.exec('PRAGMA busy_timeout = 5000')
        const changed = db.prepare("UPDATE rate_counters SET count = 50000 WHERE slot LIKE ? AND slot LIKE '%push-24h%'").run(`%_${dayStart / 1000}`)
        expect(Number(changed.changes)).toBeGreaterThanOrEqual(1)
      } finally {
        db.close()
      }
      clock.advance(120_000) // a fresh 60 s window: only the day window refuses
      const res = await ops[0]!.send(x)
      expect(res.statusCode).toBe(429)
      expect(res.json()).toEqual({ ok: false, error: 'rate limited' })
      expect(res.headers['retry-after']).toBe(String((dayStart + DAY_MS - clock.now()) / 1000))
      clock.set(dayStart + DAY_MS - 500)
      expect((await ops[0]!.send(x)).headers['retry-after']).toBe('1') // at least 1
      clock.set(dayStart + DAY_MS)
      expect((await ops[0]!.send(x)).statusCode).toBe(202)
    } finally {
      await x.cleanup()
    }
  })

  it('Retry-After of the 24 h window is the reset the limiter reports (any limiter)', async () => {
    const refusing: RateLimiter = {
      async consume(_key, windows) {
        return { allowed: false, window: windows[1]!, resetInSeconds: 4321 }
      },
      async peek(_key, windows) {
        return windows.map(() => 0)
      },
      async addCounts() {},
      async readCounts(keys) {
        return keys.map(() => 0)
      },
      async updateNote() {},
      async readNotes(keys) {
        return keys.map(() => null)
      },
      async close() {},
    }
    const other = await createHarness({ clock, rateLimiter: refusing })
    try {
      const x = await createTestTenant(other.deps)
      const res = await other.edge.inject({ method: 'POST', url: '/v1/contacts', headers: x.keyHeaders(), payload: body([record(1)]) })
      expect(res.statusCode).toBe(429)
      expect(res.headers['retry-after']).toBe('4321')
    } finally {
      await other.close()
    }
  })
})
