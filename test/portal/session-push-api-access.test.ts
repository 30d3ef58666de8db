import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, body, expectError, record, type IngestFixture } from '../ingest/support/harness.ts'
import { sameOrigin, signIn } from './support.ts'

/**
 * Issue 21 item 8: a portal session pushing through the origin fallback (`POST /api/contacts`,
 * contract 4.6 rule 1) is held to the account's plan like its keys: with `api_access` off, 403
 * `forbidden` and nothing queued. Each case has its control (the same push with access on).
 */
describe('a session push needs the account to have API access', () => {
  let fixture: IngestFixture
  let cookie: string
  const push = () => fixture.h.portal.inject({ method: 'POST', url: '/api/contacts', headers: sameOrigin(cookie), payload: body([record(1)]) })

  beforeAll(async () => {
    fixture = await createIngestFixture()
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('api_access off: 403 forbidden, nothing queued; on again: 202', async () => {
    expect((await push()).statusCode, 'control: access on').toBe(202)
    await fixture.h.deps.tenants.updateAccount(fixture.t.account.id, { api_access: false })
    const before = fixture.h.q.batches().length
    // mutation: dropping the api_access check of portalPushCaller (domain/portal/push.ts) answers 202
    expectError(await push(), 403, 'forbidden')
    expect(fixture.h.q.batches().length).toBe(before)
    await fixture.h.deps.tenants.updateAccount(fixture.t.account.id, { api_access: true })
    expect((await push()).statusCode).toBe(202)
  })
})
