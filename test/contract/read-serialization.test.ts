import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import pino from 'pino'
import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import { Contact } from '@lsv/shared/contract/contact.ts'
import { ContactList } from '@lsv/shared/contract/contact-list.ts'
import { CONTRACT_VERSION } from '@lsv/shared/contract/version.ts'
import { assembleContact } from '@lsv/shared/domain/contacts/assemble.ts'
import type { ContactRecord } from '@lsv/shared/model/records.ts'
import { definitionArb, recordArb, tiersArb } from '../outbound/records.ts'

/**
 * The read operations declare `Contact` and `ContactList` as their 200 schemas, and fastify
 * compiles its response serializer from them (fast-json-stringify), which drops or coerces
 * whatever a schema does not describe. Every assembled contact must come out unchanged.
 */
let app: App
let current: unknown

beforeAll(async () => {
  app = buildBaseApp({ logger: pino({ level: 'silent' }) })
  app.get('/one', { schema: { response: { 200: Contact } } as never }, async () => current as never)
  app.get('/list', { schema: { response: { 200: ContactList } } as never }, async () => current as never)
  await app.ready()
})
afterAll(async () => {
  await app?.close()
})

describe('read answers through the response serializer', () => {
  it('a Contact and a ContactList are sent exactly as assembled (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        definitionArb.chain((definitions) =>
          fc.tuple(fc.constant(definitions), recordArb(definitions.map((d) => d.key)), tiersArb, fc.boolean(), fc.boolean()),
        ),
        async ([definitions, record, permittedTiers, contactHandles, sensitiveTraits]) => {
          const { contact } = assembleContact(record as ContactRecord, {
            permittedTiers,
            contactHandles,
            sensitiveTraits,
            definitions,
            mappedCustomFieldKeys: null,
            portalBaseUrl: 'https://portal.example',
          })
          const expected = JSON.parse(JSON.stringify(contact))
          current = contact
          expect((await app.inject({ method: 'GET', url: '/one' })).json()).toEqual(expected)
          current = { object: 'list', data: [contact], has_more: true, contract_version: CONTRACT_VERSION, next_cursor: 'abc' }
          expect((await app.inject({ method: 'GET', url: '/list' })).json()).toEqual(JSON.parse(JSON.stringify(current)))
        },
      ),
      { numRuns: 150 },
    )
  }, 120_000)
})
