import { describe, expect, it } from 'vitest'
import pino from 'pino'
import { readFileSync } from 'node:fs'
import { buildBaseApp } from '@lsv/shared/http/base-app.ts'
import { OPENAPI_FILE } from '@lsv/shared/contract/generated-files.ts'
import { registerSchemaRoutes } from '../../services/portal-api/src/routes/schema.ts'
import { throwingDeps } from './throwing-deps.ts'

async function schemaApp() {
  const deps = throwingDeps()
  const app = buildBaseApp({ logger: pino({ level: 'silent' }) })
  registerSchemaRoutes(app, deps)
  await app.ready()
  return { app, deps }
}

describe('GET /api/v1/schema (contract 4.1)', () => {
  it('answers 200 with application/schema+json and X-Service-Contract, touching no store', async () => {
    const { app, deps } = await schemaApp()
    const res = await app.inject({ method: 'GET', url: '/api/v1/schema' })
    await app.close()
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/schema+json')
    expect(res.headers['x-service-contract']).toBe('2026-09-04')
    const doc = JSON.parse(res.body)
    expect(doc['x-service-contract-version']).toBe('2026-09-04')
    expect(Object.keys(doc.$defs)).toEqual(expect.arrayContaining(['Contact', 'ContactList', 'FieldPolicy', 'WebhookEventV2']))
    expect(deps.touched).toEqual([])
  })

  it.each([
    ['a wrong bearer key', { authorization: 'Bearer lsk_wrong' }],
    ['a malformed Authorization header', { authorization: 'Basic ???' }],
    ['a blank x-api-key', { 'x-api-key': '' }],
  ])('ignores %s', async (_label, headers) => {
    const { app, deps } = await schemaApp()
    const plain = await app.inject({ method: 'GET', url: '/api/v1/schema' })
    const res = await app.inject({ method: 'GET', url: '/api/v1/schema', headers })
    await app.close()
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/schema+json')
    expect(res.headers['x-service-contract']).toBe('2026-09-04')
    expect(res.body).toBe(plain.body)
    expect(deps.touched).toEqual([])
  })

  it('answers 200 in the full portal app even when every store method throws', async () => {
    const { buildApp } = await import('../../services/portal-api/src/app.ts')
    const deps = throwingDeps()
    const app = await buildApp(deps)
    const res = await app.inject({ method: 'GET', url: '/api/v1/schema', headers: { authorization: 'Bearer lsk_nope', host: 'portal.example.com' } })
    await app.close()
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/schema+json')
    expect(res.headers['x-service-contract']).toBe('2026-09-04')
    expect(JSON.parse(res.body)['x-service-contract-version']).toBe('2026-09-04')
    expect(deps.touched).toEqual([])
  })
})

describe('GET /api/v1/openapi.json', () => {
  it('serves the committed OpenAPI document', async () => {
    const { app, deps } = await schemaApp()
    const res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })
    await app.close()
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.body).toBe(readFileSync(OPENAPI_FILE, 'utf8'))
    expect(JSON.parse(res.body).openapi).toBe('3.1.0')
    expect(deps.touched).toEqual([])
  })
})
