import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import pino from 'pino'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsImport from 'ajv-formats'
import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import { registerSchemaRoutes } from '../../services/portal-api/src/routes/schema.ts'
import { throwingDeps } from './throwing-deps.ts'
import { contactExample, webhookEventExample } from './fixtures.ts'

// ajv-formats is CommonJS; under native ESM its callable is the default export.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (ajv: Ajv2020) => Ajv2020

/**
 * A consumer compiling `GET /api/v1/schema` with Ajv's defaults (strict mode on), as
 * docs/contract.md ("Compiling the schema with Ajv") tells them: the document's member
 * `x-service-contract-version` (contract 4.1 and 9 name it) is not a JSON Schema keyword, so
 * strict Ajv refuses it until `ajv.addKeyword('x-service-contract-version')`.
 */
describe('the served schema under default-strict Ajv', () => {
  let app: App
  let served: Record<string, unknown>

  beforeAll(async () => {
    app = buildBaseApp({ logger: pino({ level: 'silent' }) })
    registerSchemaRoutes(app, throwingDeps())
    const base = await app.listen({ host: '127.0.0.1', port: 0 })
    const res = await fetch(`${base}/api/v1/schema`)
    expect(res.status).toBe(200)
    served = (await res.json()) as Record<string, unknown>
  })
  afterAll(async () => {
    await app?.close()
  })

  it('is refused on x-service-contract-version without the documented call', () => {
    const ajv = new Ajv2020()
    addFormats(ajv)
    expect(() => ajv.compile(served)).toThrow(/unknown keyword: "x-service-contract-version"/)
  })

  it('compiles after ajv.addKeyword and validates the contract types by $id', () => {
    const ajv = new Ajv2020()
    addFormats(ajv)
    ajv.addKeyword('x-service-contract-version')
    ajv.addSchema(served)
    const contact = ajv.getSchema(`${served.$id}#/$defs/Contact`)!
    expect(contact(contactExample()), JSON.stringify(contact.errors)).toBe(true)
    expect(contact({ ...contactExample(), object: 'person' })).toBe(false)
    const event = ajv.getSchema(`${served.$id}#/$defs/WebhookEventV2`)!
    expect(event(webhookEventExample()), JSON.stringify(event.errors)).toBe(true)
  })

  it('docs/contract.md gives that call', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/contract.md'), 'utf8')
    expect(doc).toContain("ajv.addKeyword('x-service-contract-version')")
    expect(doc).toContain('addFormats(ajv)')
  })
})
