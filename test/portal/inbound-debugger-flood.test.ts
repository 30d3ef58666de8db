/**
 * Issue 31 (attack, Low): anyone who knows a webhook source id could flood that connection's
 * inbound debugger without a token, and 110 refused requests replaced all 100 real entries.
 * Refused pushes now have their own slice in the push log (ports/push-log.ts) and a per-minute
 * cap on how many are recorded per connection (domain/activity/refused-cap.ts); the rest are
 * counted, and the page says how many.
 *
 * Over real HTTP: 10 accepted pushes to a webhook source, then 500 pushes with a wrong token to
 * the same source id, 100 in each of five minutes (the test's clock). The debugger still shows
 * the 10 accepted ones, records 20 refused ones a minute (100) and says how many more were
 * refused in the last two minutes (2 × 80). The Activity screen's counts are tallies per status
 * (nothing there can be pushed out): the 10 accepted stay 10 beside the 500 refused.
 * Mutations: one slice for both kinds in the push log (the embedded adapter's isAccepted always
 * true) → the 100 refused trim the 10 accepted; no cap (admit always true) → no "more refused".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { App } from '@lsv/shared/http/base-app.ts'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { REFUSED_RECORDED_PER_MINUTE } from '@lsv/shared/domain/activity/refused-cap.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { body, createHarness, record, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'

const ACCEPTED = 10
const REFUSED = 500
/** refused pushes sent per minute of the test's clock */
const PER_MINUTE = 100

/** a POST over loopback with its own Host header (fetch does not send one it is given) */
function post(port: number, path: string, headers: Record<string, string>, payload: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(payload)
  })
}

async function listen(app: App): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

describe('inbound debugger under a flood of refused pushes (issue 31)', () => {
  // the flood's minutes are the test's to move (the cap is per UTC minute), within one UTC day
  const today = new Date()
  const clock = new ManualClock(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate(), 12, 0, 1))
  let h: Harness
  let t: StoredTenant
  let cookie = ''
  let portalUrl = ''

  beforeAll(async () => {
    h = await createHarness({ clock })
    t = await createTestTenant(h.deps)
    cookie = await signIn(h.portal, t.accountId)
    portalUrl = `http://127.0.0.1:${await listen(h.portal)}`
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  it('keeps the accepted pushes, records the first refused ones of each minute and counts the rest', async () => {
    const edge = await buildEdge(h.deps)
    const port = await listen(edge)
    const path = `/v1/contacts/${t.webhookConnectionId}`
    const json = { host: t.host, 'content-type': 'application/json' }
    for (let i = 0; i < ACCEPTED; i++) {
      expect(await post(port, path, { ...json, 'x-webhook-token': t.sourceToken }, body([record(i)]))).toBe(202)
    }
    // the flood: no token of the source, ten at a time, a hundred a minute
    const statuses: number[] = []
    for (let sent = 0; sent < REFUSED; sent += 10) {
      if (sent > 0 && sent % PER_MINUTE === 0) clock.advance(60_000)
      statuses.push(...(await Promise.all(Array.from({ length: 10 }, () => post(port, path, { ...json, 'x-webhook-token': 'wrong' }, body([record(9)]))))))
    }
    expect(new Set(statuses)).toEqual(new Set([401]))
    // closing flushes what the recorder gathered
    await edge.close()

    const res = await fetch(`${portalUrl}/portal/connections/${t.webhookConnectionId}/pushes`, { headers: { cookie } })
    expect(res.status).toBe(200)
    const text = await res.text()
    const badges = [...text.matchAll(/<span class="badge (?:ok|bad)">(\d{3}) /g)].map((m) => m[1])
    // every accepted push is still there
    expect(badges.filter((s) => s === '202')).toHaveLength(ACCEPTED)
    // the first refused ones of each minute are recorded, the rest counted: the last two minutes' named
    expect(badges.filter((s) => s === '401')).toHaveLength((REFUSED / PER_MINUTE) * REFUSED_RECORDED_PER_MINUTE)
    expect(text).toContain(`and ${2 * (PER_MINUTE - REFUSED_RECORDED_PER_MINUTE)} more refused since`)
    expect(text).not.toContain('wrong')

    // Activity: a tally per answer, so the flood shows as what it is and the accepted count stays
    const activity = await (await fetch(`${portalUrl}/portal/activity`, { headers: { cookie } })).text()
    const day = new Date(clock.now()).toISOString().slice(0, 10)
    const row = new RegExp(`<tr><th scope="row">${day}</th>((?:<td[^>]*>\\d+</td>)+)</tr>`).exec(activity)?.[1]
    expect([...(row ?? '').matchAll(/>(\d+)<\/td>/g)].map((m) => m[1])).toEqual([String(ACCEPTED), String(REFUSED), String(ACCEPTED + REFUSED)])
  })
})
