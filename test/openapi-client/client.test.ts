import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { App } from '@lsv/shared/http/base-app.ts'
import { OPENAPI_FILE } from '@lsv/shared/contract/generated-files.ts'
import { createContractValidator } from '@lsv/shared/contract/ajv.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { startUpsertWorkerBackground } from '../../services/upsert-worker/src/background.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { callsSource } from './calls.ts'
import { RUNTIME_SCRIPT } from './runtime-script.ts'
import { generateTypes, runNode, scratchProject, typeCheck, type Diagnostic } from './toolchain.ts'
import { TYPED_USAGE, WRONG_USAGE } from './typed-usage.ts'

/**
 * The committed OpenAPI document as a client author meets it: openapi-typescript generates the
 * types into a scratch project, a call to EVERY operation is written with openapi-fetch and
 * type-checked with tsc (plus hand-written code over the read answers), and a consumer program
 * from the same project runs push, list, read one, mint and the schema against a listening
 * portal and edge (embedded stack, a tenant from the ingest harness).
 */
const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'))
const calls = callsSource(doc)
let project: ReturnType<typeof scratchProject>
let checked: { diagnostics: Diagnostic[]; output: string; code: number }

beforeAll(async () => {
  project = scratchProject()
  await generateTypes(OPENAPI_FILE, join(project.dir, 'api.d.ts'))
  project.write('calls.ts', calls.source)
  project.write('typed-usage.ts', TYPED_USAGE)
  project.write('consumer.ts', RUNTIME_SCRIPT)
  checked = await typeCheck(project.dir)
}, 180_000)

afterAll(() => project?.remove())

describe('a client generated with openapi-typescript', () => {
  it('type-checks a call to every operation with openapi-fetch', () => {
    expect(calls.operationIds.length).toBeGreaterThanOrEqual(37)
    const inCalls = checked.diagnostics.filter((d) => d.file.endsWith('calls.ts'))
    const failing = [...calls.lines]
      .filter(([, [from, to]]) => inCalls.some((d) => d.line >= from && d.line <= to))
      .map(
        ([id]) =>
          `${id}: ${inCalls
            .filter((d) => d.line >= calls.lines.get(id)![0] && d.line <= calls.lines.get(id)![1])
            .map((d) => d.message)
            .join('; ')}`,
      )
    expect(failing, 'operations whose call does not type-check').toEqual([])
    expect(checked.diagnostics, checked.output).toEqual([])
    expect(checked.code).toBe(0)
  })

  it('types the read answers as Contact and ContactList (one.handles, page.data) and the failure envelope', () => {
    expect(checked.diagnostics.filter((d) => d.file.endsWith('typed-usage.ts'))).toEqual([])
  })

  it('refuses calls that do not fit (the check can fail)', async () => {
    const wrong = scratchProject()
    try {
      await generateTypes(OPENAPI_FILE, join(wrong.dir, 'api.d.ts'))
      wrong.write('wrong.ts', WRONG_USAGE)
      const result = await typeCheck(wrong.dir)
      const lines = WRONG_USAGE.split('\n')
      const flagged = new Set(result.diagnostics.map((d) => lines[d.line - 1]!.trim()))
      expect([...flagged].sort()).toEqual(
        [
          "await client.GET('/api/v1/contacts/{id}', {})",
          "await client.POST('/api/contacts/links', { body: { destinationUrl: 42, contactId: 'c' } })",
          'return data?.handles.fax',
        ].sort(),
      )
    } finally {
      wrong.remove()
    }
  }, 180_000)
})

describe('the generated client against listening apps', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let tenant: StoredTenant
  let portal: App
  let edge: App
  let worker: { close(): Promise<void> }
  let portalUrl: string
  let edgeUrl: string

  beforeAll(async () => {
    deps = await createTestDeps()
    tenant = await createTestTenant(deps, { api: { key: { scopes: ['contacts:write', 'contacts:links:write', 'contacts:read'] } } })
    portal = await buildPortal(deps)
    edge = await buildEdge(deps)
    worker = await startUpsertWorkerBackground(deps)
    portalUrl = await portal.listen({ host: '127.0.0.1', port: 0 })
    const edgePort = new URL(await edge.listen({ host: '127.0.0.1', port: 0 })).port
    edgeUrl = `http://${tenant.host}:${edgePort}`
  }, 60_000)

  afterAll(async () => {
    await worker?.close()
    await portal?.close()
    await edge?.close()
    await tenant?.cleanup()
    await deps?.cleanup()
  })

  it('pushes, lists, reads one, mints and fetches the schema; answers match the document', async () => {
    expect(checked.diagnostics.filter((d) => d.file.endsWith('consumer.ts'))).toEqual([])
    const run = await runNode([join(project.dir, 'consumer.ts')], { PORTAL_URL: portalUrl, EDGE_URL: edgeUrl, API_KEY: tenant.key })
    expect(run.code, run.stderr).toBe(0)
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!)

    expect(out.schema).toEqual({ status: 200, version: '2026-09-04', contractHeader: '2026-09-04' })
    expect(out.push).toEqual({ status: 202, data: { ok: true, accepted: 1, queued: true } })
    expect(out.list.status).toBe(200)
    expect(out.list.data.data).toHaveLength(1)
    expect(out.one.status).toBe(200)
    expect(out.one).toMatchObject({ fullName: 'Ada Lovelace', email: 'ada@example.com' })
    expect(out.mint.status).toBe(200)
    expect(out.mint.data).toMatchObject({ ok: true, contactId: out.one.data.id, type: 'opaque' })
    expect(out.mint.data.link).toMatch(/^https:\/\/www\.example\.com\/landing\?utm=x&lsv=a\.[A-Za-z0-9_-]{43}$/)
    expect(out.missing).toEqual({ status: 404, error: { ok: false, error: 'contact not found' } })
    expect(out.badMint).toEqual({ status: 400, error: { ok: false, error: 'destination host is not authorized' } })

    // the answers are what the document's components say
    const validate = createContractValidator()
    expect(validate('Contact', out.one.data).errors).toBeNull()
    expect(validate('ContactList', out.list.data).errors).toBeNull()
  }, 120_000)
})
