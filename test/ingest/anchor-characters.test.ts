/**
 * The anchor's length is counted in characters (Unicode code points), as link minting's schema
 * counts `externalId` (docs/ingestion.md, "Field mapping"; contract 8: `externalId` 1..256). It was
 * counted in UTF-16 units: an external id of 129 emoji (258 units) was silently dropped
 * (`accepted: 0`) while minting named ids of 256 emoji, and the partner CRM answered such a
 * `contactId` 400. Over real HTTP, on both push routes, at the boundary: 256 emoji are an anchor,
 * 257 are refused the way 257 ASCII letters are.
 * Mutation: mapping.ts anchorValue back to `t.length <= MAX_EXTERNAL_ID_LENGTH` -> the 256-emoji
 * pushes answer `accepted: 0` and 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { body, listenIngestFixture, post, type ListeningIngestFixture } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/** outside the Basic Multilingual Plane: one character, two UTF-16 units */
const EMOJI = '😀'
const emoji = (n: number) => EMOJI.repeat(n)

describe('anchors of 256 characters outside the BMP', () => {
  let fixture: ListeningIngestFixture
  let minter: StoredTenant
  let portal = ''

  beforeAll(async () => {
    fixture = await listenIngestFixture()
    minter = await createTestTenant(fixture.h.deps, { api: { key: { scopes: ['contacts:write', 'contacts:links:write'] } } })
    await fixture.h.portal.listen({ port: 0, host: '127.0.0.1' })
    portal = `http://127.0.0.1:${(fixture.h.portal.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await minter?.cleanup()
    await fixture?.close()
  })

  const pushOne = (t: StoredTenant, externalId: string) =>
    post(
      fixture.port,
      '/v1/contacts',
      { host: t.host, authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body([{ external_id: externalId }]),
    )
  const pushPartner = (contactId: string) => {
    const { t } = fixture
    return post(
      fixture.port,
      '/v1/contacts/partnercrm',
      { host: t.host, 'x-webhook-token': t.locationToken, 'content-type': 'application/json' },
      JSON.stringify({ contactId, locationId: t.locationId }),
    )
  }

  it('POST /v1/contacts: 256 emoji are accepted, 257 are not, exactly as 256 and 257 ASCII letters', async () => {
    expect(emoji(256).length).toBe(512)
    for (const [externalId, accepted] of [
      [emoji(256), 1],
      [emoji(257), 0],
      ['x'.repeat(256), 1],
      ['x'.repeat(257), 0],
      // the reported case: 129 emoji (258 UTF-16 units) were dropped
      [emoji(129), 1],
      // a mix within the limit: 255 letters and one emoji (257 units)
      [`${'x'.repeat(255)}${EMOJI}`, 1],
    ] as const) {
      expect(await pushOne(fixture.t, externalId), `${[...externalId].length} characters`).toEqual({
        status: 202,
        answer: { ok: true, accepted, queued: true },
      })
    }
  })

  it('the worker stores the 256-emoji anchor, and link minting names that very contact; 257 emoji are refused by both', async () => {
    const { h } = fixture
    const before = h.q.batches().length
    expect((await pushOne(minter, emoji(256))).answer).toEqual({ ok: true, accepted: 1, queued: true })
    expect(await handleBatchMessage(h.deps, h.q.batches()[before]!)).toBe('ack')
    const stored = await h.deps.contacts.getByAnchor(minter.account.id, 'crm', emoji(256))
    expect(stored).not.toBeNull()

    const mint = (externalId: string) =>
      fetch(`${portal}/api/contacts/links`, {
        method: 'POST',
        headers: { authorization: `Bearer ${minter.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ destinationUrl: 'https://example.com/x', source: 'crm', externalId }),
      })
    const minted = await mint(emoji(256))
    expect(minted.status).toBe(200)
    expect(((await minted.json()) as { contactId: string }).contactId).toBe(stored!.id)
    // one more character: minting's schema refuses it, as the push drops it
    const refused = await mint(emoji(257))
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({ ok: false, error: 'invalid payload' })
    expect((await pushOne(minter, emoji(257))).answer).toEqual({ ok: true, accepted: 0, queued: true })
  })

  it('POST /v1/contacts/partnercrm: a contactId of 256 emoji is 202, 257 is 400 invalid payload, as 257 ASCII letters', async () => {
    const accepted = { status: 202, answer: { ok: true, accepted: 1, queued: true } }
    const refused = { status: 400, answer: { ok: false, error: 'invalid payload' } }
    expect(await pushPartner(emoji(256))).toEqual(accepted)
    expect(await pushPartner(emoji(129))).toEqual(accepted)
    expect(await pushPartner('x'.repeat(256))).toEqual(accepted)
    expect(await pushPartner(emoji(257))).toEqual(refused)
    expect(await pushPartner('x'.repeat(257))).toEqual(refused)
  })
})
