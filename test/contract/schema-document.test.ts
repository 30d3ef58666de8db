import { describe, expect, it, beforeAll } from 'vitest'
import pino from 'pino'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsImport from 'ajv-formats'
import { buildBaseApp } from '@lsv/shared/http/base-app.ts'
import { createContractValidator, createContractAjv } from '@lsv/shared/contract/ajv.ts'
import { buildContractSchemaDocument, CONTRACT_SCHEMA_ID } from '@lsv/shared/contract/schema-document.ts'
import { registerSchemaRoutes } from '../../services/portal-api/src/routes/schema.ts'
import { throwingDeps } from './throwing-deps.ts'
import { contactExample, contactListExample, fieldPolicyExample, minimalContactExample, webhookEventExample } from './fixtures.ts'

const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (ajv: Ajv2020) => Ajv2020

type Mutate = (v: Record<string, any>) => void

/** For every `$defs` entry: values that must validate and mutations of the first that must not. */
const CASES: Record<string, { valid: unknown[]; invalid: Record<string, Mutate | unknown> }> = {
  Contact: {
    valid: [contactExample(), minimalContactExample()],
    invalid: {
      'unknown top-level key': (c: any) => {
        c.extra = 1
      },
      'missing top-level key (links)': (c: any) => {
        delete c.links
      },
      'wrong contract_version': (c: any) => {
        c.contract_version = '2026-01-01'
      },
      'wrong object literal': (c: any) => {
        c.object = 'list'
      },
      'bad uuid': (c: any) => {
        c.id = 'not-a-uuid'
      },
      'bad subject_type': (c: any) => {
        c.subject_type = 'robot'
      },
      'phone handle missing dnc_known': (c: any) => {
        delete c.handles.phones[0].dnc_known
      },
      'phone handle with unknown key': (c: any) => {
        c.handles.phones[0].extra = true
      },
      'email handle verified not boolean': (c: any) => {
        c.handles.emails[0].verified = 'yes'
      },
      'trait bad group': (c: any) => {
        c.traits[0].group = 'hobbies'
      },
      'custom field bad type': (c: any) => {
        c.custom_fields[0].type = 'json'
      },
      'custom field bad source': (c: any) => {
        c.custom_fields[0].source = 'guess'
      },
      'custom field missing value member': (c: any) => {
        delete c.custom_fields[0].value
      },
      'custom field enriched_at not date-time': (c: any) => {
        c.custom_fields[1].enriched_at = 'yesterday'
      },
      'missing with unknown reason': (c: any) => {
        c.missing['identity.title'] = 'forgotten'
      },
      'business_email not an email': (c: any) => {
        c.handles.business_email = 'nope'
      },
      'identity member a number': (c: any) => {
        c.identity.first_name = 5
      },
      'company website not a uri': (c: any) => {
        c.company.website = 'not a uri'
      },
      'provenance bad name_source': (c: any) => {
        c.provenance.name_source = 'crawler'
      },
      'provenance first_seen_at null': (c: any) => {
        c.provenance.first_seen_at = null
      },
      'links.self not a uri': (c: any) => {
        c.links.self = 'relative/path'
      },
    },
  },
  ContactList: {
    valid: [
      contactListExample(),
      { object: 'list', data: [], has_more: false, contract_version: '2026-09-04' },
      { ...contactListExample(), next_cursor: null },
    ],
    invalid: {
      'wrong object literal': (l: any) => {
        l.object = 'contact'
      },
      'missing has_more': (l: any) => {
        delete l.has_more
      },
      'wrong contract_version': (l: any) => {
        l.contract_version = '2026-09-05'
      },
      'invalid contact inside data': (l: any) => {
        l.data[0].extra = 1
      },
      'unknown key': (l: any) => {
        l.total = 2
      },
    },
  },
  FieldPolicy: {
    valid: [fieldPolicyExample(), { permitted_tiers: [], enabled_tiers: [], withheld_tiers: [], included: 0, missing: 0, missing_reason: {} }],
    invalid: {
      'tier 4': (f: any) => {
        f.permitted_tiers = [1, 4]
      },
      'tier as string': (f: any) => {
        f.enabled_tiers = ['1']
      },
      'bad withheld tier name': (f: any) => {
        f.withheld_tiers = ['custom_fields']
      },
      'negative count': (f: any) => {
        f.included = -1
      },
      'fractional count': (f: any) => {
        f.missing = 1.5
      },
      'missing_reason unknown reason key': (f: any) => {
        f.missing_reason.forgotten = 1
      },
      'missing_reason negative': (f: any) => {
        f.missing_reason.withheld_tier = -1
      },
      'missing member': (f: any) => {
        delete f.missing_reason
      },
      'unknown key': (f: any) => {
        f.extra = true
      },
    },
  },
  WebhookEventV2: {
    valid: [
      webhookEventExample(),
      (() => {
        const e: any = webhookEventExample()
        delete e.field_policy
        delete e.visit
        delete e.classification
        delete e.served_from
        return e
      })(),
    ],
    invalid: {
      'wrong event': (e: any) => {
        e.event = 'visitor.seen'
      },
      'wrong contract_version': (e: any) => {
        e.contract_version = '2026-09-03'
      },
      'bad tier': (e: any) => {
        e.tier = 'account'
      },
      'emitted_at not date-time': (e: any) => {
        e.emitted_at = 'now'
      },
      'subject invalid': (e: any) => {
        delete e.subject.handles.phones[0].dnc_known
      },
      'field_policy invalid': (e: any) => {
        e.field_policy.included = 'many'
      },
      'visit.seen_at not date-time': (e: any) => {
        e.visit.seen_at = 'today'
      },
      'unknown key': (e: any) => {
        e.extra = 1
      },
      'missing is_repeat': (e: any) => {
        delete e.is_repeat
      },
      'missing subject': (e: any) => {
        delete e.subject
      },
    },
  },
  ContactIdentity: { valid: [{}, contactExample().identity], invalid: { 'network_url not uri': { network_url: 'x y' }, number: { title: 1 } } },
  ContactCompany: { valid: [{}, contactExample().company], invalid: { 'website not uri': { website: 'no' }, bool: { name: true } } },
  ContactLocation: { valid: [{}, { city: null }], invalid: { 'number postal code': { postal_code: 12345 } } },
  ContactHandles: { valid: [{}, contactExample().handles], invalid: { 'emails not array': { emails: {} }, 'bad business_email': { business_email: 'x' } } },
  EmailHandle: {
    valid: [{ value: null, kind: null, verified: null }],
    invalid: { 'missing verified': { value: 'a@b.co', kind: null }, 'unknown key': { value: null, kind: null, verified: null, x: 1 } },
  },
  PhoneHandle: {
    valid: [{ value: '+1', kind: null, dnc: null, dnc_known: false, callable: false }],
    invalid: {
      'missing dnc_known': { value: '+1', kind: null, dnc: false, callable: true },
      'dnc_known null': { value: '+1', kind: null, dnc: false, dnc_known: null, callable: true },
      'missing callable': { value: '+1', kind: null, dnc: false, dnc_known: true },
    },
  },
  Trait: {
    valid: [{ key: null, label: null, value: null, group: 'household' }],
    invalid: { 'bad group': { key: null, label: null, value: null, group: 'x' }, 'missing label': { key: 'k', value: 'v', group: 'household' } },
  },
  CustomField: {
    valid: [{ key: 'k', label: 'K', type: 'number', value: '12', source: 'manual', enriched_at: null }],
    invalid: {
      'null key': { key: null, label: 'K', type: 'number', value: '12', source: 'manual', enriched_at: null },
      'missing enriched_at': { key: 'k', label: 'K', type: 'number', value: '12', source: 'manual' },
      'bad type': { key: 'k', label: 'K', type: 'integer', value: '12', source: 'manual', enriched_at: null },
    },
  },
  ContactMissing: { valid: [{}, { anything: 'withheld_tier', other: 'no_source' }], invalid: { 'bad reason': { a: 'unknown' }, 'null reason': { a: null } } },
  MissingReason: { valid: ['no_source', 'not_enriched', 'unmapped', 'withheld_compliance', 'withheld_tier'], invalid: { other: 'withheld', null: null } },
  ContactProvenance: {
    valid: [{}, { name_source: null, resolved_by: 'person' }],
    invalid: { 'bad last_seen_at': { last_seen_at: '2026-13-45' }, 'resolved_by null': { resolved_by: null } },
  },
  ContactLinks: { valid: [{}, { portal: null, self: 'https://p.example/x' }], invalid: { 'portal not uri': { portal: 'p' } } },
  MissingReasonCounts: { valid: [{}, { no_source: 0, unmapped: 3 }], invalid: { 'unknown key': { other: 1 }, 'not integer': { unmapped: 0.5 } } },
  WebhookVisit: { valid: [{}, webhookEventExample().visit], invalid: { 'seen_at not date-time': { seen_at: 'x' }, number: { referrer: 1 } } },
}

function instance(valid: unknown, mutation: Mutate | unknown): unknown {
  if (typeof mutation !== 'function') return mutation
  const copy = structuredClone(valid) as Record<string, any>
  ;(mutation as Mutate)(copy)
  return copy
}

describe('the served contract schema document (Ajv 2020, as a consumer compiles it)', () => {
  let doc: Record<string, any>
  const compiled = new Map<string, ValidateFunction>()

  beforeAll(async () => {
    const app = buildBaseApp({ logger: pino({ level: 'silent' }) })
    registerSchemaRoutes(app, throwingDeps())
    const res = await app.inject({ method: 'GET', url: '/api/v1/schema' })
    await app.close()
    expect(res.statusCode).toBe(200)
    doc = JSON.parse(res.body)
    const ajv = new Ajv2020({ allErrors: true, strict: false })
    addFormats(ajv)
    ajv.addSchema(doc)
    for (const name of Object.keys(doc.$defs)) compiled.set(name, ajv.getSchema(`${doc.$id}#/$defs/${name}`)!)
  })

  it('has the members of contract 4.1', () => {
    expect(doc.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(doc.$id).toBe(CONTRACT_SCHEMA_ID)
    expect(new URL(doc.$id).protocol).toBe('https:')
    expect(typeof doc.title).toBe('string')
    expect(doc['x-service-contract-version']).toBe('2026-09-04')
    for (const name of ['Contact', 'ContactList', 'FieldPolicy', 'WebhookEventV2']) {
      expect(doc.$defs[name]?.title).toBe(name)
    }
    expect(doc.$defs.Contact.additionalProperties).toBe(false)
  })

  it('uses only internal references that resolve', () => {
    const refs: string[] = []
    JSON.stringify(doc, (key, value) => {
      if (key === '$ref') refs.push(value)
      return value
    })
    expect(refs.length).toBeGreaterThan(0)
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/\$defs\/[A-Za-z0-9]+$/)
      expect(doc.$defs[ref.slice('#/$defs/'.length)]).toBeDefined()
    }
  })

  it('has test cases for every $defs entry', () => {
    expect(Object.keys(doc.$defs).sort()).toEqual(Object.keys(CASES).sort())
  })

  for (const [name, { valid, invalid }] of Object.entries(CASES)) {
    describe(name, () => {
      valid.forEach((value, i) => {
        it(`accepts valid example ${i + 1}`, () => {
          const validate = compiled.get(name)!
          expect(validate(value), JSON.stringify(validate.errors)).toBe(true)
        })
      })
      for (const [label, mutation] of Object.entries(invalid)) {
        it(`rejects: ${label}`, () => {
          expect(compiled.get(name)!(instance(valid[0], mutation))).toBe(false)
        })
      }
    })
  }

  it('compiles under Ajv strict mode too (no unknown keywords besides the declared annotation)', () => {
    const ajv = createContractAjv()
    expect(() => ajv.compile(buildContractSchemaDocument())).not.toThrow()
  })

  it('is deterministic', () => {
    expect(JSON.stringify(buildContractSchemaDocument())).toBe(JSON.stringify(buildContractSchemaDocument()))
  })
})

describe('createContractValidator()', () => {
  const validate = createContractValidator()

  it('validates each top-level definition by name', () => {
    expect(validate('Contact', contactExample())).toEqual({ valid: true, ok: true, errors: null })
    expect(validate.validate('ContactList', contactListExample()).valid).toBe(true)
    expect(validate('FieldPolicy', fieldPolicyExample()).valid).toBe(true)
    expect(validate('WebhookEventV2', webhookEventExample()).valid).toBe(true)
  })

  it('reports errors for an invalid value', () => {
    const phoneless: any = contactExample()
    delete phoneless.handles.phones[0].dnc_known
    const res = validate('Contact', phoneless)
    expect(res.valid).toBe(false)
    expect(res.ok).toBe(false)
    expect(JSON.stringify(res.errors)).toContain('dnc_known')
    expect(validate('WebhookEventV2', contactExample()).valid).toBe(false)
  })

  it('rejects an unknown definition name', () => {
    expect(() => validate('Nope' as never, {})).toThrow(/unknown contract definition/)
  })
})
