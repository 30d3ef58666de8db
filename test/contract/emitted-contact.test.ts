import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import pino from 'pino'
import { buildBaseApp } from '@lsv/shared/http/base-app.ts'
import { CONTRACT_SCHEMA_FILE } from '@lsv/shared/contract/generated-files.ts'
import { createContractAjv } from '@lsv/shared/contract/ajv.ts'
import { EmittedContact } from '@lsv/shared/contract/contact.ts'
import { EmittedContactList } from '@lsv/shared/contract/contact-list.ts'
import { EmittedWebhookEventV2 } from '@lsv/shared/contract/webhook-event.ts'
import { registerSchemaRoutes } from '../../services/portal-api/src/routes/schema.ts'
import { throwingDeps } from './throwing-deps.ts'
import { contactExample } from './fixtures.ts'
import { inclusionGaps, inlineRefs, stripAnnotations } from './schema-inclusion.ts'

/**
 * The schemas of what we emit (Emitted*, contract/contact.ts) are refinements of the contract's
 * definitions as `GET /api/v1/schema` serves them: every value the code's types allow is a valid
 * contract value. Proven on the schemas themselves, against the served document (references
 * inlined), so a loosening of an Emitted* schema, or a tightening of the served document that
 * the code does not follow, fails here.
 */

async function servedDocument(): Promise<{ $defs: Record<string, unknown> }> {
  const app = buildBaseApp({ logger: pino({ level: 'silent' }) })
  registerSchemaRoutes(app, throwingDeps())
  const res = await app.inject({ method: 'GET', url: '/api/v1/schema' })
  await app.close()
  expect(res.statusCode).toBe(200)
  return JSON.parse(res.body)
}

const PAIRS = [
  ['Contact', EmittedContact],
  ['ContactList', EmittedContactList],
  ['WebhookEventV2', EmittedWebhookEventV2],
] as const

describe('the schemas of what we emit are within the served contract schemas', () => {
  it('the served document is the committed one (so the check below is against what customers compile)', async () => {
    expect(JSON.stringify(await servedDocument())).toBe(JSON.stringify(JSON.parse(readFileSync(CONTRACT_SCHEMA_FILE, 'utf8'))))
  })

  for (const [name, emitted] of PAIRS) {
    it(`Emitted${name} ⊆ ${name}`, async () => {
      const doc = await servedDocument()
      const served = inlineRefs(doc.$defs[name], doc.$defs)
      expect(inclusionGaps(emitted, served)).toEqual([])
      // and it is a refinement indeed: the contract's definition is not within ours
      expect(inclusionGaps(served, emitted).length).toBeGreaterThan(0)
    })
  }

  it('states what the code emits where the contract leaves it open', () => {
    const json = stripAnnotations(EmittedContact) as any
    expect(json.properties.handles.required).toEqual(['emails', 'phones'])
    expect(json.properties.provenance.required).toEqual(['first_seen_at', 'last_seen_at', 'name_source'])
    expect(json.properties.links.required).toEqual(['portal', 'self'])
    for (const part of ['identity', 'company', 'location', 'handles', 'provenance', 'links']) {
      expect(json.properties[part].additionalProperties, part).toBe(false)
    }
  })

  it('a contract-valid contact the code would never emit is refused by the emitted schema', () => {
    const validate = createContractAjv().compile(EmittedContact)
    // the code omits a member without a value instead of sending null
    const emittedExample = (): any => {
      const c: any = contactExample()
      delete c.identity.title
      delete c.location.state
      return c
    }
    expect(validate(emittedExample()), JSON.stringify(validate.errors)).toBe(true)
    expect(validate(contactExample())).toBe(false)
    const noPhones = emittedExample()
    delete noPhones.handles.phones
    expect(validate(noPhones)).toBe(false)
    const nullPortal = emittedExample()
    nullPortal.links.portal = null
    expect(validate(nullPortal)).toBe(false)
    const extraMember = emittedExample()
    extraMember.provenance.other = 'x'
    expect(validate(extraMember)).toBe(false)
    const notCallable = emittedExample()
    notCallable.handles.phones[0] = { ...notCallable.handles.phones[0], dnc: true, callable: false }
    expect(validate(notCallable)).toBe(false)
  })
})

describe('the inclusion check itself (negative controls: each loosening is reported)', () => {
  const loosened: Array<[string, (s: any) => void]> = [
    [
      'a format dropped',
      (s) => {
        delete s.properties.identity.properties.network_url.format
      },
    ],
    [
      'the top level opened',
      (s) => {
        s.additionalProperties = true
      },
    ],
    [
      'a required member made optional',
      (s) => {
        s.required = s.required.filter((k: string) => k !== 'id')
      },
    ],
    [
      'an enum widened',
      (s) => {
        s.properties.custom_fields.items.properties.type.enum.push('json')
      },
    ],
    [
      'null allowed where the contract refuses it',
      (s) => {
        s.properties.provenance.properties.first_seen_at = { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] }
      },
    ],
    [
      'an unknown member allowed in a closed contract object',
      (s) => {
        s.properties.handles.properties.phones.items.additionalProperties = true
      },
    ],
    [
      'a member the contract does not have',
      (s) => {
        s.properties.score = { type: 'number' }
      },
    ],
    [
      'patternProperties (not reasoned about)',
      (s) => {
        s.properties.missing.patternProperties = { '^x': {} }
      },
    ],
  ]

  for (const [label, loosen] of loosened) {
    it(`reports: ${label}`, async () => {
      const doc = await servedDocument()
      const served = inlineRefs(doc.$defs.Contact, doc.$defs)
      const schema = stripAnnotations(EmittedContact) as any
      expect(inclusionGaps(schema, served)).toEqual([])
      loosen(schema)
      expect(inclusionGaps(schema, served).length).toBeGreaterThan(0)
    })
  }
})
