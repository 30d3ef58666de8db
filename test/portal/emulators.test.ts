import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { emulators } from '../helpers/embedded.ts'
import { createIngestFixture, expectError, type IngestFixture } from '../ingest/support/harness.ts'
import { call, ADMIN } from '../management/harness.ts'
import { mintLink, pathOf, sameOrigin, setCookieOf } from './support.ts'

/** Portal access through portal-api on the production store adapters (Firestore emulator). */
describe.skipIf(!emulators.firestore || !emulators.pubsub)('portal access on Firestore', () => {
  let fixture: IngestFixture

  beforeAll(async () => {
    fixture = await createIngestFixture({ backend: 'emulators' })
  })
  afterAll(async () => {
    await fixture?.h.deps.portalAccess.deleteAccountData(fixture.t.account.id)
    await fixture?.close()
  })

  it('simultaneous GETs of one link start exactly one session; the operator ends it', async () => {
    const { portal } = fixture.h
    const cookies: string[] = []
    for (let round = 0; round < 4; round++) {
      const { url } = await mintLink(portal, fixture.t.account.id)
      const answers = await Promise.all([0, 1, 2].map(() => portal.inject({ method: 'GET', url: pathOf(url) })))
      expect(answers.map((r) => r.statusCode).sort()).toEqual([303, 410, 410])
      const cookie = setCookieOf(answers.find((r) => r.statusCode === 303)!)!
      cookies.push(`${cookie.name}=${cookie.value}`)
    }
    const mint = (cookie: string) =>
      portal.inject({
        method: 'POST',
        url: '/api/contacts/links',
        headers: sameOrigin(cookie),
        payload: { destinationUrl: 'https://example.com/', source: 'crm', externalId: 'nobody' },
      })
    for (const cookie of cookies) expectError(await mint(cookie), 404, 'contact not found')
    expect((await call(portal, 'DELETE', `${ADMIN}/${fixture.t.account.id}/portal-sessions`)).statusCode).toBe(204)
    for (const cookie of cookies) expectError(await mint(cookie), 401, 'unauthorized')
  })
})
