import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { VisitEvent } from '@lsv/shared/contract/visit-event.ts'
import { handleVisitEvent } from '@lsv/shared/domain/visits/handle.ts'
import { MAX_EVENT_TIME_SKEW_MS } from '@lsv/shared/domain/visits/event-time.ts'
import { deliveryIdFor } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * Event times are bounded to five minutes past the clock (docs/management-api.md, "Visit events"):
 * a year-9999 `seen_at` or `emitted_at` must not win every later merge.
 */
const clock = new ManualClock(Date.UTC(2026, 10, 2, 12, 0, 0))
const iso = (ms: number) => new Date(ms).toISOString()
const FAR_FUTURE = '9999-12-31T23:59:59.000Z'

let deps: Awaited<ReturnType<typeof createTestDeps>>
let tenant: StoredTenant
let app: App

beforeAll(async () => {
  deps = await createTestDeps({ clock })
  tenant = await createTestTenant(deps, {
    ...ACCOUNT_ONLY,
    integration: { url: 'http://127.0.0.1:9/hook', tiers: { contact_handles: true, sensitive_traits: false } },
  })
  app = await buildApp(deps)
})
afterAll(async () => {
  await app?.close()
  if (deps) {
    await tenant.cleanup()
    await deps.cleanup()
  }
})

function visit(networkUrl: string, title: string, times: { seen_at?: string; emitted_at?: string }): VisitEvent {
  return {
    id: `visit_${randomSuffix()}`,
    account_id: tenant.account.id,
    tier: 'person',
    ...(times.emitted_at === undefined ? {} : { emitted_at: times.emitted_at }),
    visit: { captured_url: 'https://shop.example/', ...(times.seen_at === undefined ? {} : { seen_at: times.seen_at }) },
    resolution: { identity: { network_url: networkUrl, title }, resolved_by: 'vendor' },
  }
}

async function deliveredBody(event: VisitEvent): Promise<{ emitted_at: string; visit?: { seen_at?: string } }> {
  const delivery = await deps.deliveries.get(deliveryIdFor(event.id, tenant.integration.id))
  return JSON.parse(delivery!.body)
}

describe('visit events from the topic: a time past the clock is replaced by the publish time', () => {
  it.each(['seen_at', 'emitted_at'] as const)('a year-9999 %s does not win the next merge', async (member) => {
    const networkUrl = `https://network.example/in/${randomSuffix()}`
    const published = iso(clock.now() - 1_000)
    const future = visit(networkUrl, 'Frozen', { [member]: FAR_FUTURE })
    const first = await handleVisitEvent(deps, future, published)
    if (first.result !== 'delivered') throw new Error(first.result)
    const afterFirst = await deps.contacts.get(tenant.account.id, first.contactId)
    expect(afterFirst!.last_seen_at).toBe(published)
    // the receiver gets the time that was used, not the impossible one
    const body = await deliveredBody(future)
    if (member === 'seen_at') expect(body.visit!.seen_at).toBe(published)
    else expect(body.emitted_at).toBe(published)

    clock.advance(60_000)
    const later = visit(networkUrl, 'Current', { [member]: iso(clock.now()) })
    expect(await handleVisitEvent(deps, later, iso(clock.now()))).toMatchObject({ result: 'delivered', contactId: first.contactId })
    const stored = await deps.contacts.get(tenant.account.id, first.contactId)
    expect(stored!.identity.title).toBe('Current')
    expect(stored!.last_seen_at).toBe(iso(clock.now()))
  })

  it('a time within the allowed skew is kept as sent', async () => {
    const ahead = iso(clock.now() + MAX_EVENT_TIME_SKEW_MS - 1_000)
    const event = visit(`https://network.example/in/${randomSuffix()}`, 'Soon', { seen_at: ahead, emitted_at: ahead })
    const outcome = await handleVisitEvent(deps, event, iso(clock.now()))
    if (outcome.result !== 'delivered') throw new Error(outcome.result)
    expect((await deps.contacts.get(tenant.account.id, outcome.contactId))!.last_seen_at).toBe(ahead)
    expect(await deliveredBody(event)).toMatchObject({ emitted_at: ahead, visit: { seen_at: ahead } })
  })
})

describe('POST /api/v1/admin/accounts/{accountId}/visits refuses a time past the clock', () => {
  const post = (payload: Record<string, unknown>) =>
    app.inject({
      method: 'POST',
      url: `/api/v1/admin/accounts/${tenant.account.id}/visits`,
      headers: { authorization: 'Bearer test-operator-token' },
      payload,
    })
  const body = (times: Record<string, unknown>) => ({ id: `visit_${randomSuffix()}`, tier: 'person', contact_id: 'c', ...times })

  it('400 invalid payload with an issue naming the member and the limit', async () => {
    const seen = await post(body({ visit: { seen_at: FAR_FUTURE } }))
    expect(seen.statusCode).toBe(400)
    const limit = iso(clock.now() + MAX_EVENT_TIME_SKEW_MS)
    expect(seen.json()).toEqual({
      ok: false,
      error: 'invalid payload',
      issues: [{ code: 'maximum', path: '/visit/seen_at', message: `must not be later than 300 seconds past the server clock (at most ${limit})` }],
    })
    const emitted = await post(body({ emitted_at: iso(clock.now() + MAX_EVENT_TIME_SKEW_MS + 1_000) }))
    expect(emitted.statusCode).toBe(400)
    expect(emitted.json().issues.map((i: { path: string }) => i.path)).toEqual(['/emitted_at'])
  })

  it('202 for a time in the past or within the skew', async () => {
    expect((await post(body({ visit: { seen_at: iso(clock.now() - 3_600_000) } }))).statusCode).toBe(202)
    expect((await post(body({ emitted_at: iso(clock.now() + MAX_EVENT_TIME_SKEW_MS), visit: { seen_at: iso(clock.now() + 60_000) } }))).statusCode).toBe(202)
  })
})
