import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../services/portal-api/src/app.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { authenticateApiKey } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { verifyLocationToken, verifySourceToken } from '@lsv/shared/domain/auth/verify-source-token.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { OPERATOR_TOKEN } from './harness.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

let deps: Awaited<ReturnType<typeof createTestDeps>>
let app: App
let portal: string
const accounts: string[] = []

interface Run {
  code: number
  stdout: string
  stderr: string
  json: any
}

/** Runs `node scripts/cli.ts ...args` against the test portal. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['scripts/cli.ts', ...args],
      {
        cwd: ROOT,
        env: { ...process.env, PORTAL_URL: portal, OPERATOR_TOKEN, ...env },
        timeout: 20_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0
        let json: unknown = null
        try {
          json = JSON.parse(stdout)
        } catch {
          /* not JSON */
        }
        resolve({ code, stdout, stderr, json })
      },
    )
  })
}

async function ok(args: string[]): Promise<any> {
  const r = await cli(args)
  if (r.code !== 0) throw new Error(`cli ${args.join(' ')} -> ${r.code}: ${r.stderr}`)
  return r.json
}

const keyWorks = async (key: string) =>
  authenticateApiKey(deps, { authorization: `Bearer ${key}` }, { scope: 'contacts:write' }).then(
    () => true,
    () => false,
  )

beforeAll(async () => {
  deps = await createTestDeps()
  app = await buildApp(deps)
  await app.listen({ port: 0, host: '127.0.0.1' })
  portal = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
})

afterAll(async () => {
  for (const id of accounts) await deps.tenants.deleteAccountData(id).catch(() => {})
  await app?.close()
  await deps?.cleanup()
})

describe('operator CLI', () => {
  it('provisions a tenant end to end', async () => {
    const publicId = `cli-${randomSuffix(4)}`
    const account = await ok(['accounts', 'create', publicId, '--name', 'CLI Co', '--tiers', '1,2,3'])
    accounts.push(account.id)
    expect(account).toMatchObject({ public_id: publicId, name: 'CLI Co', active: true, api_access: true, permitted_tiers: [1, 2, 3] })
    const a = account.id as string

    expect(await ok(['accounts', 'update', a, '--inactive', '--no-api-access'])).toMatchObject({ active: false, api_access: false })
    expect(await ok(['accounts', 'update', a, '--active', '--api-access'])).toMatchObject({ active: true, api_access: true })
    expect((await ok(['accounts', 'get', a])).id).toBe(a)

    expect(await ok(['domains', 'set', a, 'A.com', 'b.com.', 'münchen.de'])).toEqual({ domains: ['a.com', 'b.com', 'xn--mnchen-3ya.de'] })
    expect(await ok(['custom-fields', 'create', a, 'plan', '--label', 'Plan', '--type', 'select'])).toMatchObject({ key: 'plan', type: 'select' })
    expect((await ok(['custom-fields', 'list', a])).data).toHaveLength(1)

    const api = await ok(['connections', 'create', a, '--type', 'api', '--source', 'crm', '--map', 'Mail=email', '--map', 'Plan=custom_fields.plan'])
    expect(api).toMatchObject({
      type: 'api',
      source: 'crm',
      field_mappings: [
        { from: 'Mail', to: 'email' },
        { from: 'Plan', to: 'custom_fields.plan' },
      ],
    })
    const key = await ok(['keys', 'create', a, api.id, '--scopes', 'contacts:write,contacts:links:write', '--name', 'ci'])
    expect(key.scopes).toEqual(['contacts:write', 'contacts:links:write'])
    expect(await keyWorks(key.key)).toBe(true)
    expect(await ok(['keys', 'get', a, api.id, key.id])).not.toHaveProperty('key')

    const rotated = await ok(['keys', 'rotate', a, api.id, key.id, '--grace', '0'])
    expect(rotated.scopes).toEqual(key.scopes)
    expect(await keyWorks(key.key)).toBe(false)
    expect(await keyWorks(rotated.key)).toBe(true)
    expect(await ok(['keys', 'revoke', a, api.id, rotated.id])).toEqual({ ok: true })
    expect(await keyWorks(rotated.key)).toBe(false)

    const webhook = await ok(['connections', 'create', a, '--type', 'webhook', '--source', 'forms'])
    expect(webhook.token).toMatch(/^lst_/)
    const token = await ok(['tokens', 'rotate', a, webhook.id, '--grace', '0'])
    const webhookRecord = (await deps.tenants.getConnection(webhook.id))!
    expect(await verifySourceToken(deps, webhookRecord, token.token)).toBe(true)
    expect(await verifySourceToken(deps, webhookRecord, webhook.token)).toBe(false)
    expect(await ok(['connections', 'update', a, webhook.id, '--inactive', '--clear-mappings'])).toMatchObject({ active: false, field_mappings: [] })
    expect((await ok(['connections', 'list', a])).data).toHaveLength(2)

    const partner = await ok(['connections', 'create', a, '--type', 'partnercrm'])
    const location = await ok(['locations', 'add', a, partner.id, 'loc-1'])
    expect(await verifyLocationToken(deps, (await deps.tenants.getLocation(a, 'loc-1'))!, location.token)).toBe(true)
    const locToken = await ok(['locations', 'rotate', a, partner.id, 'loc-1', '--grace', '0'])
    expect(await verifyLocationToken(deps, (await deps.tenants.getLocation(a, 'loc-1'))!, locToken.token)).toBe(true)
    expect(await verifyLocationToken(deps, (await deps.tenants.getLocation(a, 'loc-1'))!, location.token)).toBe(false)
    expect(await ok(['locations', 'remove', a, partner.id, 'loc-1'])).toEqual({ ok: true })
    expect((await deps.tenants.getLocation(a, 'loc-1'))?.active).toBe(false)

    const integration = await ok(['integrations', 'create', a, '--url', 'https://hooks.example.com/x', '--contact-handles'])
    expect(integration).toMatchObject({ payload_version: 2, tiers: { contact_handles: true, sensitive_traits: false } })
    expect(integration.signing_secret).toMatch(/^whsec_/)
    expect(await ok(['integrations', 'update', a, integration.id, '--no-contact-handles', '--inactive'])).toMatchObject({
      active: false,
      tiers: { contact_handles: false },
    })
    expect(await ok(['deliveries', 'list', a, integration.id, '--limit', '5'])).toMatchObject({ data: [], has_more: false })
    expect((await cli(['deliveries', 'replay', a, integration.id, 'dlv_missing'])).stderr).toContain('not found')

    const visit = await ok([
      'visits',
      'send',
      a,
      JSON.stringify({ id: `evt-${randomSuffix(4)}`, tier: 'company', visit: {}, resolution: { company: { name: 'X' }, resolved_by: 'cli' } }),
    ])
    expect(visit).toMatchObject({ ok: true })
  }, 120_000)

  it('prints the API error on stderr and exits 1', async () => {
    const taken = `cli-${randomSuffix(4)}`
    accounts.push((await ok(['accounts', 'create', taken])).id)
    const dup = await cli(['accounts', 'create', taken])
    expect(dup.code).toBe(1)
    expect(dup.stdout).toBe('')
    expect(dup.stderr).toContain('public_id taken')

    const invalid = await cli(['accounts', 'create', 'bad_id'])
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toContain('invalid payload')
    expect(invalid.stderr).toContain('/public_id')

    const wrongToken = await cli(['accounts', 'list'], { OPERATOR_TOKEN: 'nope' })
    expect(wrongToken.code).toBe(1)
    expect(wrongToken.stderr).toContain('unauthorized')
    const flagToken = await cli(['--token', 'nope', 'accounts', 'list'])
    expect(flagToken.stderr).toContain('unauthorized')
    expect((await cli(['accounts', 'list', '--token', OPERATOR_TOKEN], { OPERATOR_TOKEN: '' })).code).toBe(0)

    const missing = await cli(['accounts', 'get', '00000000-0000-4000-8000-000000000000'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('not found')

    const unreachable = await cli(['accounts', 'list', '--portal', 'http://127.0.0.1:9'])
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr).toContain('cannot reach the portal')
  })

  it('refuses usage mistakes before calling the API', async () => {
    for (const args of [
      ['accounts', 'create'],
      ['accounts', 'frobnicate'],
      ['nothing'],
      ['keys', 'create', 'a', 'c', '--bogus'],
      ['keys', 'rotate', 'a', 'c', 'k', '--grace', 'soon'],
      ['connections', 'create', 'a'],
    ]) {
      const r = await cli(args)
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.stderr, args.join(' ')).toMatch(/^error: /)
    }
    // required options are checked by the CLI itself, with the option's help
    for (const [args, name] of [
      [['connections', 'create', 'a'], 'type'],
      [['integrations', 'create', 'a'], 'url'],
      [['custom-fields', 'create', 'a', 'k'], 'type'],
    ] as const) {
      const r = await cli([...args])
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(new RegExp(`^error: --${name} is required: `))
    }
  })

  it('answers --help at every level', async () => {
    const top = await cli(['--help'])
    expect(top.code).toBe(0)
    expect(top.stdout).toContain('usage: npm run cli -- <resource> <verb>')
    for (const r of ['accounts', 'connections', 'keys', 'tokens', 'locations', 'domains', 'custom-fields', 'integrations', 'deliveries', 'visits']) {
      const res = await cli([r, '--help'])
      expect(res.code, r).toBe(0)
      expect(res.stdout, r).toContain(`usage: npm run cli -- ${r} <verb>`)
    }
    const verb = await cli(['keys', 'create', '--help'])
    expect(verb.code).toBe(0)
    expect(verb.stdout).toContain('--scopes <value>')
  })
})
