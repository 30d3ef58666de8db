import { describe, expect, it } from 'vitest'
import { assignEdgeServers, EDGE_SERVER, isEdgePath } from '../../services/portal-api/src/openapi/servers.ts'
import { createStandInDeps } from '../../services/portal-api/src/openapi/stand-in-deps.ts'

describe('edge path servers', () => {
  it('recognizes edge paths', () => {
    expect(isEdgePath('/v1/contacts')).toBe(true)
    expect(isEdgePath('/v1/contacts/{sourceId}')).toBe(true)
    expect(isEdgePath('/api/v1/schema')).toBe(false)
    expect(isEdgePath('/v10/x')).toBe(false)
    expect(isEdgePath('/api/contacts')).toBe(false)
  })

  it('gives only edge path items the edge host', () => {
    const doc = { paths: { '/v1/contacts': { post: {} }, '/api/contacts': { post: {} } } as Record<string, Record<string, unknown>> }
    assignEdgeServers(doc)
    expect(doc.paths['/v1/contacts']!.servers).toEqual([EDGE_SERVER])
    expect(doc.paths['/api/contacts']!.servers).toBeUndefined()
    expect(EDGE_SERVER.url).toBe('{edge_base_url}')
  })
})

describe('stand-in deps for OpenAPI generation', () => {
  it('throws, naming the member, when a route uses deps while registering', () => {
    const deps = createStandInDeps()
    expect(() => deps.tenants).toThrow(/deps\.tenants/)
    expect(() => deps.config).toThrow(/deps\.config/)
  })

  it('can be captured in closures and awaited without being used', async () => {
    const deps = createStandInDeps()
    const handler = () => deps.contacts
    expect(typeof handler).toBe('function')
    await expect(Promise.resolve(deps)).resolves.toBe(deps)
  })
})
