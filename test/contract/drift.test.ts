import { beforeAll, describe, expect, it } from 'vitest'
import { existsSync, readFileSync } from 'node:fs'
import { canonicalJson } from '@lsv/shared/contract/canonical-json.ts'
import { buildContractSchemaDocument } from '@lsv/shared/contract/schema-document.ts'
import { CONTRACT_SCHEMA_FILE, OPENAPI_FILE, OPENAPI_HOST_FILES } from '@lsv/shared/contract/generated-files.ts'
import { buildOpenApiDocument } from '../../scripts/lib/openapi/build.ts'
import { hostOpenApiDocument } from '../../scripts/lib/openapi/hosts.ts'

const STALE = 'is stale: run npm run generate'

function committed(file: string): string {
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run generate`)
  return readFileSync(file, 'utf8')
}

/** The committed generated files must equal a fresh in-memory build (scripts/generate-contract-files.ts). */
describe('generated contract files', () => {
  it('contract-2026-09-04.schema.json equals the schema built from code', () => {
    const fresh = canonicalJson(buildContractSchemaDocument())
    expect(committed(CONTRACT_SCHEMA_FILE) === fresh, `shared/generated/contract-2026-09-04.schema.json ${STALE}`).toBe(true)
  })

  it('openapi.json equals the document generated from the routes, and each host document the one derived from it', async () => {
    const whole = await buildOpenApiDocument()
    expect(committed(OPENAPI_FILE) === canonicalJson(whole), `shared/generated/openapi.json ${STALE}`).toBe(true)
    for (const host of ['portal', 'edge'] as const) {
      const fresh = canonicalJson(hostOpenApiDocument(whole, host))
      expect(committed(OPENAPI_HOST_FILES[host]) === fresh, `shared/generated/openapi.${host}.json ${STALE}`).toBe(true)
    }
  })
})

describe('the OpenAPI document', () => {
  let doc: Record<string, any>
  beforeAll(async () => {
    doc = (await buildOpenApiDocument()) as Record<string, any>
  })

  it('is OpenAPI 3.1.0, API reference v1, and describes getContractSchema', () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe('v1')
    const op = doc.paths['/api/v1/schema'].get
    expect(op.operationId).toBe('getContractSchema')
    expect(op.security).toEqual([])
    expect(Object.keys(op.responses)).toEqual(['200'])
    expect(Object.keys(op.responses['200'].content)).toEqual(['application/schema+json'])
    expect(op.responses['200'].headers['X-Service-Contract']).toBeDefined()
  })

  it('declares both hosts as server variables and the security schemes', () => {
    const urls = doc.servers.map((s: { url: string }) => s.url)
    expect(urls).toEqual(['{portal_base_url}', '{edge_base_url}'])
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
      'apiKeyHeader',
      'bearerKey',
      'operatorToken',
      'webhookTokenHeader',
      'webhookTokenQuery',
    ])
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' })
    expect(doc.components.securitySchemes.webhookTokenQuery).toMatchObject({ type: 'apiKey', in: 'query', name: 'token' })
  })

  it('gives every operation exactly one server: the edge host for /v1/..., the portal for the rest', () => {
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      expect(item.servers, path).toBeUndefined()
      for (const [method, op] of Object.entries<any>(item)) {
        const urls = op.servers?.map((s: { url: string }) => s.url)
        expect(urls, `${method} ${path}`).toEqual([path.startsWith('/v1/') ? '{edge_base_url}' : '{portal_base_url}'])
      }
    }
  })

  it('declares Retry-After (integer, minimum 1) on every 429 response', () => {
    let count = 0
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const r429 = op.responses['429']
        if (!r429) continue
        count++
        expect(r429.headers?.['Retry-After']?.schema, `${method} ${path}`).toMatchObject({ type: 'integer', minimum: 1 })
      }
    }
    expect(count).toBeGreaterThanOrEqual(5)
  })

  it('answers the read operations with the Contact and ContactList components', () => {
    const schemaOf = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema
    expect(schemaOf('/api/v1/contacts/{id}')).toEqual({ $ref: '#/components/schemas/Contact' })
    expect(schemaOf('/api/v1/contacts')).toEqual({ $ref: '#/components/schemas/ContactList' })
  })

  it('lets the partner CRM push be called without a token (before the cutover), and no other push', () => {
    expect(doc.paths['/v1/contacts/partnercrm'].post.security).toEqual([{ webhookTokenHeader: [] }, { webhookTokenQuery: [] }, {}])
    expect(doc.paths['/v1/contacts/{sourceId}'].post.security).toEqual([{ webhookTokenHeader: [] }, { webhookTokenQuery: [] }])
    expect(doc.paths['/v1/contacts'].post.security).toEqual([{ bearerKey: [] }, { apiKeyHeader: [] }])
  })

  it('has a unique operationId on every operation', () => {
    const ids: string[] = []
    for (const item of Object.values<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (method === 'servers' || method === 'parameters') continue
        expect(typeof op.operationId, `${method} operation without operationId`).toBe('string')
        ids.push(op.operationId)
      }
    }
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('describes every operation of the contract (section 4)', () => {
    const expected: Array<[string, string]> = [
      ['get', '/api/v1/schema'],
      ['post', '/api/contacts/links'],
      ['post', '/v1/contacts'],
      ['post', '/v1/contacts/{sourceId}'],
      ['post', '/v1/contacts/partnercrm'],
      ['post', '/api/contacts'],
      ['post', '/api/contacts/webhook/{sourceId}'],
    ]
    const missing = expected.filter(([method, path]) => !doc.paths[path]?.[method]).map(([m, p]) => `${m.toUpperCase()} ${p}`)
    expect(missing, 'operations not registered in registerPortalRoutes / registerPushRoutes').toEqual([])
  })

  it('describes the outbound visitor.identified webhook with the contract schemas as components', () => {
    expect(doc.webhooks.visitorIdentifiedV2.post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookEventV2' })
    for (const name of ['Contact', 'ContactList', 'FieldPolicy', 'WebhookEventV2']) expect(doc.components.schemas[name]?.title).toBe(name)
  })

  it("declares the headers a webhook receiver verifies (Standard Webhooks and the contract's), and no credential scheme", () => {
    const op = doc.webhooks.visitorIdentifiedV2.post
    const headers = op.parameters.filter((p: { in: string }) => p.in === 'header').map((p: { name: string; required: boolean }) => [p.name, p.required])
    expect(headers).toEqual(
      expect.arrayContaining([
        ['webhook-id', true],
        ['webhook-timestamp', true],
        ['webhook-signature', true],
        ['X-Service-Signature', true],
        ['X-Service-Idempotency-Key', true],
      ]),
    )
    expect(op.security).toEqual([])
  })

  it('has only internal references, and every one resolves', () => {
    const refs: string[] = []
    JSON.stringify(doc, (key, value) => {
      if (key === '$ref') refs.push(value)
      return value
    })
    for (const ref of refs) {
      expect(ref.startsWith('#/'), ref).toBe(true)
      const target = ref
        .slice(2)
        .split('/')
        .reduce<any>((node, part) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc)
      expect(target, ref).toBeDefined()
    }
  })
})
