import { describe, expect, it } from 'vitest'
import type { TSchema } from 'typebox'
import { createValidatorCompiler } from '@lsv/shared/http/route-schema-compilers.ts'
import { MintLinkBody, MintLinkResponse } from '@lsv/shared/contract/links.ts'
import { ContactsPushBodyDocumented, PartnerCrmContactBody, PushAccepted } from '@lsv/shared/contract/push.ts'
import { IncludeQuery } from '@lsv/shared/contract/read.ts'

/** Compiles with the exact validator the services use for bodies (strict, no coercion, defaults applied). */
const compiler = createValidatorCompiler()
function bodyValidator(schema: TSchema) {
  const fn = compiler({ schema, httpPart: 'body', method: 'POST', url: '/' } as never) as unknown as ((v: unknown) => boolean) & { errors?: unknown[] }
  return (value: unknown) => fn(value) === true
}

const UUID = '3f1c2b8e-5d4a-4c6b-9e7f-0a1b2c3d4e5f'
const url = 'https://engines.example/pricing'

describe('MintLinkBody (contract 4.2)', () => {
  const valid = bodyValidator(MintLinkBody)

  it('accepts a contact named by contactId, or by source and externalId', () => {
    expect(valid({ destinationUrl: url, contactId: UUID })).toBe(true)
    expect(valid({ destinationUrl: url, source: 'crm', externalId: 'e-1' })).toBe(true)
    expect(valid({ destinationUrl: url, contactId: UUID, source: 'crm', externalId: 'e-1', type: 'signed', expSeconds: 60 })).toBe(true)
  })

  it('rejects a request naming neither contactId nor both source and externalId', () => {
    expect(valid({ destinationUrl: url })).toBe(false)
    expect(valid({ destinationUrl: url, source: 'crm' })).toBe(false)
    expect(valid({ destinationUrl: url, externalId: 'e-1' })).toBe(false)
  })

  it('defaults type to opaque', () => {
    const body: Record<string, unknown> = { destinationUrl: url, contactId: UUID }
    expect(valid(body)).toBe(true)
    expect(body.type).toBe('opaque')
  })

  it.each([
    ['empty destinationUrl', { destinationUrl: '', contactId: UUID }],
    ['destinationUrl over 2048', { destinationUrl: `https://a.example/${'x'.repeat(2048)}`, contactId: UUID }],
    ['contactId not a uuid', { destinationUrl: url, contactId: 'abc' }],
    ['empty source', { destinationUrl: url, source: '', externalId: 'e' }],
    ['source over 64', { destinationUrl: url, source: 's'.repeat(65), externalId: 'e' }],
    ['externalId over 256', { destinationUrl: url, source: 's', externalId: 'e'.repeat(257) }],
    ['bad type', { destinationUrl: url, contactId: UUID, type: 'plain' }],
    ['expSeconds 0', { destinationUrl: url, contactId: UUID, expSeconds: 0 }],
    ['expSeconds over a year', { destinationUrl: url, contactId: UUID, expSeconds: 31_536_001 }],
    ['expSeconds fractional', { destinationUrl: url, contactId: UUID, expSeconds: 1.5 }],
    ['expSeconds as a string', { destinationUrl: url, contactId: UUID, expSeconds: '60' }],
    ['missing destinationUrl', { contactId: UUID }],
  ])('rejects %s', (_label, body) => {
    expect(valid(body)).toBe(false)
  })

  it('accepts the bounds themselves', () => {
    expect(
      valid({ destinationUrl: `https://a.example/${'x'.repeat(2048 - 18)}`, source: 's'.repeat(64), externalId: 'e'.repeat(256), expSeconds: 31_536_000 }),
    ).toBe(true)
    expect(valid({ destinationUrl: 'x', contactId: UUID, expSeconds: 1 })).toBe(true)
  })
})

describe('MintLinkResponse', () => {
  const valid = bodyValidator(MintLinkResponse)
  it('requires every member', () => {
    const ok = { ok: true, contactId: UUID, type: 'opaque', token: `a.${'A'.repeat(43)}`, link: `${url}?lsv=a.x` }
    expect(valid(ok)).toBe(true)
    expect(valid({ ...ok, ok: false })).toBe(false)
    expect(valid({ ...ok, link: 'not a link' })).toBe(false)
    const { token: _t, ...noToken } = ok
    expect(valid(noToken)).toBe(false)
  })
})

describe('ContactsPushBody, the published schema (contract 4.3)', () => {
  const valid = bodyValidator(ContactsPushBodyDocumented)

  it('accepts records of arbitrary keys and values', () => {
    expect(valid({ contacts: [{ email: 'a@b.co', n: 1, ok: true, tags: ['x'], nested: { a: 1 }, gone: null }] })).toBe(true)
  })

  it('rejects a body without a contacts array, an empty array and non-object records', () => {
    expect(valid({})).toBe(false)
    expect(valid({ contacts: {} })).toBe(false)
    expect(valid({ contacts: [] })).toBe(false)
    expect(valid({ contacts: ['a@b.co'] })).toBe(false)
    expect(valid({ contacts: [null] })).toBe(false)
  })

  it('publishes the 10000-record limit (the routes validate nothing with it: the handler answers 413 too many contacts)', () => {
    expect(valid({ contacts: Array.from({ length: 10_000 }, () => ({})) })).toBe(true)
    expect(valid({ contacts: Array.from({ length: 10_001 }, () => ({})) })).toBe(false)
    expect((ContactsPushBodyDocumented.properties.contacts as { maxItems?: number }).maxItems).toBe(10_000)
  })
})

describe('PushAccepted', () => {
  const valid = bodyValidator(PushAccepted)
  it('is {ok: true, accepted >= 0, queued: true}', () => {
    expect(valid({ ok: true, accepted: 0, queued: true })).toBe(true)
    expect(valid({ ok: true, accepted: -1, queued: true })).toBe(false)
    expect(valid({ ok: true, accepted: 1, queued: false })).toBe(false)
    expect(valid({ ok: true, accepted: 1 })).toBe(false)
  })
})

describe('PartnerCrmContactBody (contract 4.5)', () => {
  const valid = bodyValidator(PartnerCrmContactBody)
  it('has every member optional, names nullable and ids strings', () => {
    expect(valid({})).toBe(true)
    expect(valid({ contactId: 'c1', locationId: 'l1', email: null, firstName: null, companyName: 'X', customData: { a: 1 } })).toBe(true)
    expect(valid({ contactId: 5 })).toBe(false)
    expect(valid({ location_id: null })).toBe(false)
    expect(valid({ title: 7 })).toBe(false)
  })
})

describe('IncludeQuery (contract 4.7)', () => {
  it('declares include as an optional string', () => {
    expect(IncludeQuery.properties.include.type).toBe('string')
    expect(IncludeQuery.required ?? []).not.toContain('include')
  })
})
