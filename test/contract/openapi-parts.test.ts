import { describe, expect, it } from 'vitest'
import { assignServers, EDGE_SERVER, openApiPath, PORTAL_SERVER, routeKey, type Host } from '../../scripts/lib/openapi/servers.ts'
import { refNamedSchemas } from '../../scripts/lib/openapi/components.ts'

describe('operation servers', () => {
  it('turns fastify paths into OpenAPI paths', () => {
    expect(openApiPath('/v1/contacts/:sourceId')).toBe('/v1/contacts/{sourceId}')
    expect(openApiPath('/api/v1/admin/accounts/:accountId/keys/:keyId')).toBe('/api/v1/admin/accounts/{accountId}/keys/{keyId}')
  })

  it('gives each operation the host that registered it, and throws for an operation no app registered', () => {
    const doc = { paths: { '/v1/contacts': { post: {} }, '/api/contacts': { post: {}, get: {} } } as Record<string, Record<string, any>> }
    const hostOf = new Map<string, Host>([
      [routeKey('POST', '/v1/contacts'), 'edge'],
      [routeKey('post', '/api/contacts'), 'portal'],
      [routeKey('GET', '/api/contacts'), 'portal'],
    ])
    assignServers(doc, hostOf)
    expect(doc.paths['/v1/contacts']!.post.servers).toEqual([EDGE_SERVER])
    expect(doc.paths['/api/contacts']!.post.servers).toEqual([PORTAL_SERVER])
    expect(doc.paths['/api/contacts']!.get.servers).toEqual([PORTAL_SERVER])
    expect(() => assignServers({ paths: { '/x': { get: {} } } }, hostOf)).toThrow(/GET \/x/)
  })
})

describe('named schemas become component references', () => {
  it("replaces a titled schema by a $ref, keeps a component's own root and properties called title", () => {
    const names = new Set(['Contact'])
    const inline = { type: 'object', title: 'Contact', properties: { title: { type: 'string' } } }
    expect(refNamedSchemas({ schema: inline }, names)).toEqual({ schema: { $ref: '#/components/schemas/Contact' } })
    expect(refNamedSchemas(inline, names, true)).toEqual(inline)
    expect(refNamedSchemas({ type: 'object', title: 'Other' }, names)).toEqual({ type: 'object', title: 'Other' })
  })
})
