import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { updateIntegration } from '@lsv/shared/domain/tenants/integrations.ts'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import { ACCOUNT_ONLY, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { page, closeSignedInPortal, openSignedInPortal, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

/**
 * Issue 29, D3: the overview, where a tenant lands, shows the disabled/failing-endpoint banner
 * that every other screen shows, and says how many deliveries wait for a retry, linking to them.
 */
describe('portal overview: the endpoint banner and deliveries waiting for a retry', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    ;({ deps, portal, t, cookie } = await openSignedInPortal({ ...ACCOUNT_ONLY, integration: { url: 'https://hooks.example.com/waiting' } }))
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  it('counts the deliveries waiting for a retry and links to the log filtered to them', async () => {
    const now = new Date(deps.clock.now()).toISOString()
    const retrying = (n: number): DeliveryRecord => ({
      id: `dlv_wait_${n}_${t.account.id}`,
      account_id: t.account.id,
      integration_id: t.integration.id,
      event_id: `evt_wait_${n}_${t.account.id}`,
      status: 'retrying',
      attempts: [],
      body: '{}',
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    })
    await Promise.all([0, 1, 2].map((n) => deps.deliveries.put(retrying(n))))
    const home = await page(portal, '/portal/', cookie)
    expect(home.statusCode).toBe(200)
    // mutation: drop waitingLine from the overview's health → no such paragraph
    expect(home.body).toContain('<strong>3 deliveries waiting for a retry</strong>')
    expect(home.body).toContain(`href="/portal/webhooks/${t.integration.id}?status=retrying#deliveries"`)
    // the link leads to the log filtered to them
    const log = await page(portal, `/portal/webhooks/${t.integration.id}?status=retrying`, cookie)
    expect(log.statusCode).toBe(200)
    expect(log.body).toContain(`evt_wait_0_${t.account.id}`)
  })

  it('shows the disabled-endpoint banner, as every other screen does', async () => {
    await updateIntegration(deps, t.account.id, t.integration.id, { active: false })
    const connections = await page(portal, '/portal/connections', cookie)
    expect(connections.body).toContain('id="endpoint-banner"')
    // mutation: drop the banner from sendOverview → the home has none
    const home = await page(portal, '/portal/', cookie)
    expect(home.body).toContain('id="endpoint-banner"')
    expect(home.body).toContain('A webhook is disabled')
  })
})
