/**
 * Dispatch benchmark (`npm run bench:dispatch`): deliveries per second through the embedded
 * task scheduler to a loopback receiver — signing, a schema-shaped WebhookEventV2 body and the
 * delivery-log write included — against a bare undici Pool loop that signs and posts the same
 * bodies. Both keep 50 requests in flight. Each round runs both; the order alternates (platform then
 * bare in even rounds, bare then platform in odd ones) so machine noise and first-run costs hit both;
 * the medians and the median of the per-round ratios are printed (goal: >= 70%).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { Pool } from 'undici'
import { loadConfig } from '../shared/src/config/config.ts'
import { createPlatformDeps } from '../shared/src/platform/deps.ts'
import { contactIdFor } from '../shared/src/model/ids.ts'
import type { ContactRecord } from '../shared/src/model/records.ts'
import { assembleContact } from '../shared/src/domain/contacts/assemble.ts'
import { buildWebhookEventV2 } from '../shared/src/domain/webhooks/build-event.ts'
import { createDelivery } from '../shared/src/domain/webhooks/deliveries.ts'
import { createDeliveryTaskHandler } from '../shared/src/domain/webhooks/deliver.ts'
import { generateSigningSecret, signatureHeaders } from '../shared/src/domain/webhooks/signing.ts'

const N = Number(process.env.BENCH_DELIVERIES ?? 1500)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const IN_FLIGHT = 50

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function main() {
  console.log(`bench:dispatch (${N} deliveries x ${ROUNDS} rounds, ${IN_FLIGHT} in flight, node ${process.version}, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')})`)
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'))
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const url = `${origin}/hook`

  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-dispatch-'))
  // the per-endpoint rate limit is lifted: this measures the delivery pipeline's own cost
  const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, STORE_BACKEND: 'embedded', QUEUE_BACKEND: 'embedded', ALLOW_LOOPBACK_WEBHOOKS: 'true', WEBHOOK_ENDPOINT_RATE: '100000' })
  const deps = await createPlatformDeps(config, pino({ level: 'silent' }))
  const now = new Date().toISOString()
  const accountId = randomUUID()
  await deps.tenants.createAccount({ id: accountId, public_id: 'bench', name: null, active: true, api_access: true, permitted_tiers: [1, 2, 3], authorized_domains: [], created_at: now, updated_at: now })
  const secret = generateSigningSecret()
  const integrationId = `int_bench_${Date.now()}`
  await deps.tenants.createIntegration({ id: integrationId, account_id: accountId, url, payload_version: 2, tiers: { contact_handles: true, sensitive_traits: false }, active: true, disabled_reason: null, signing_secrets: [{ secret, created_at: now, expires_at: null }], created_at: now, updated_at: now })

  const record: ContactRecord = {
    id: contactIdFor(accountId, 'crm', 'bench'), account_id: accountId, source: 'crm', external_id: 'bench', subject_type: 'contact',
    identity: { first_name: 'Jane', last_name: 'Doe', full_name: 'Jane Doe', title: 'CTO' },
    company: { name: 'Acme', domain: 'acme.example', website: 'https://acme.example' }, location: { city: 'Lyon' },
    business_email: 'jane@acme.example', emails: [{ value: 'jane@home.example', kind: 'personal', verified: true }],
    phones: [{ value: '+15555550100', kind: 'mobile', dnc: false, dnc_known: true }], traits: [],
    custom_fields: { plan: { value: 'gold', source: 'inbound_mapping', enriched_at: null } }, name_source: 'form', resolved_by: 'v',
    first_seen_at: now, last_seen_at: now, updated_at: now, versions: {},
  }
  const { contact, fieldPolicy } = assembleContact(record, {
    permittedTiers: [1, 2, 3], contactHandles: true, sensitiveTraits: false, mappedCustomFieldKeys: null, portalBaseUrl: config.portalBaseUrl,
    definitions: [{ account_id: accountId, key: 'plan', label: 'Plan', type: 'select', created_at: now }],
  })
  const bodyFor = (id: string) => JSON.stringify(buildWebhookEventV2({ event: { id, account_id: accountId, tier: 'person', visit: { captured_url: 'https://shop.example/p' } }, subject: contact, fieldPolicy, isRepeat: false, emittedAt: now }))

  // platform: deliveries pre-created (record + task); timed from scheduler start to the last log write
  const handler = createDeliveryTaskHandler(deps)
  let round = 0
  async function platformRound(): Promise<number> {
    round++
    for (let i = 0; i < N; i++) {
      await createDelivery(deps, { accountId, integrationId, eventId: `evt_${round}_${i}`, body: bodyFor(`evt_${round}_${i}`), now })
    }
    let done = 0
    let resolveAll!: () => void
    const all = new Promise<void>((r) => (resolveAll = r))
    const started = performance.now()
    const runner = await deps.tasks.start(async (payload) => {
      await handler(payload)
      if (++done === N) resolveAll()
    })
    await all
    const elapsed = performance.now() - started
    await runner.close()
    return (N * 1000) / elapsed
  }

  const pool = new Pool(origin, { connections: IN_FLIGHT, pipelining: 1 })
  async function bareRound(): Promise<number> {
    round++
    const bodies = Array.from({ length: N }, (_, i) => ({ id: `evt_${round}_${i}`, body: Buffer.from(bodyFor(`evt_${round}_${i}`)) }))
    let next = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < bodies.length) {
        const b = bodies[next++]!
        const headers = signatureHeaders([secret], b.id, Date.now(), b.body) as unknown as Record<string, string>
        const res = await pool.request({ path: '/hook', method: 'POST', body: b.body, headers: { 'content-type': 'application/json', ...headers } })
        await res.body.text()
      }
    }))
    return (N * 1000) / (performance.now() - started)
  }

  const platform: number[] = []
  const bare: number[] = []
  const deadline = Date.now() + 100_000
  for (let r = 0; r < ROUNDS && Date.now() < deadline; r++) {
    // even rounds run the platform first, odd rounds the bare loop first: whatever the first run of
    // a round pays (a colder receiver, a GC of the other's garbage) falls on each side in turn
    const platformFirst = r % 2 === 0
    let p: number
    let b: number
    if (platformFirst) {
      p = await platformRound()
      b = await bareRound()
    } else {
      b = await bareRound()
      p = await platformRound()
    }
    platform.push(p)
    bare.push(b)
    console.log(`round ${r + 1} (${platformFirst ? 'platform first' : 'bare first'}): platform ${p.toFixed(0)}/s, bare ${b.toFixed(0)}/s, ratio ${(100 * p / b).toFixed(1)}%`)
  }
  const p = median(platform)
  const b = median(bare)
  // the figure is the median of the per-round ratios: a round's two runs share the machine's mood
  const ratio = median(platform.map((x, i) => x / bare[i]!))
  console.log(`dispatch: platform median ${p.toFixed(0)} deliveries/s, bare undici median ${b.toFixed(0)}/s, ratio ${(100 * ratio).toFixed(1)}% (median of per-round ratios; goal >= 70%: ${ratio >= 0.7 ? 'met' : 'NOT MET'}), ${N} deliveries x ${platform.length} rounds, ${IN_FLIGHT} in flight`)

  await pool.close()
  await deps.close()
  server.closeAllConnections()
  server.close()
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}

await main()
