import { beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PUSH_WINDOWS } from '@lsv/shared/domain/ingest/rate-limit.ts'
import { READ_WINDOWS } from '@lsv/shared/domain/contacts/read-quota.ts'
import { LINK_MINT_WINDOW } from '@lsv/shared/domain/links/rate-limit.ts'
import { CHECK_ROOT, ROOT, loadTerraform, resource, type Terraform } from './hcl.ts'

/**
 * Cloud Armor's per-address throttle (infra/cloud-armor.tf): on by default, on both public
 * backends, keyed on the connecting address, sized so that tenants at the contract's limits
 * never meet it, and a throttle of their own, much higher, in front of the inbound webhooks.
 */
let tf: Terraform
beforeAll(async () => {
  tf = await loadTerraform()
})

interface Rule {
  action: string
  priority: number
  description?: string
  match: Array<{ expr?: Array<{ expression: string }>; versioned_expr?: string; config?: Array<{ src_ip_ranges: string[] }> }>
  rate_limit_options?: Array<{
    conform_action: string
    exceed_action: string
    enforce_on_key: string
    rate_limit_threshold: Array<{ count: string | number; interval_sec: number }>
  }>
}

const policy = () => resource(tf, 'google_compute_security_policy', 'per_ip')
const rules = () => (policy().rule as Rule[]).slice().sort((a, b) => a.priority - b.priority)

/**
 * Cloud Armor's verdict for a path, evaluating the rules in priority order. Only the forms the
 * policy uses are understood (`request.path.startsWith('…')` joined by `||`, and `*` source
 * ranges); anything else throws, so a rule changed beyond them cannot pass unread.
 */
function firstRule(path: string): Rule {
  for (const rule of rules()) {
    const m = rule.match[0]!
    let matches: boolean
    if (m.expr) {
      const terms = m.expr[0]!.expression.split('||').map((t) => t.trim())
      matches = terms.some((t) => {
        const prefix = t.match(/^request\.path\.startsWith\('([^']+)'\)$/)?.[1]
        if (prefix === undefined) throw new Error(`expression not understood by this test: ${t}`)
        return path.startsWith(prefix)
      })
    } else {
      expect(m.versioned_expr).toBe('SRC_IPS_V1')
      expect(m.config![0]!.src_ip_ranges).toEqual(['*'])
      matches = true
    }
    if (matches) return rule
  }
  throw new Error(`no rule matches ${path}`)
}

describe('Cloud Armor per-address throttle', () => {
  // mutation: `default = false` on var.cloud_armor, or drop security_policy from the backend service
  it('is on by default and attached to both public backend services', () => {
    expect(tf.variable.cloud_armor?.[0]).toMatchObject({ type: '${bool}', default: true })
    expect(policy().count).toBe('${var.cloud_armor ? 1 : 0}')
    const backend = resource(tf, 'google_compute_backend_service', 'backend')
    expect(String(backend.for_each)).toMatch(/"edge-ingest", "portal-api"/)
    expect(backend.security_policy).toBe('${var.cloud_armor ? google_compute_security_policy.per_ip[0].self_link : null}')
  })

  // mutations: enforce_on_key = "XFF_IP" (callers write that header) or "ALL"; exceed deny(403)
  it('throttles per connecting address with 429, and has the default rule Cloud Armor requires', () => {
    const throttles = rules().filter((r) => r.action === 'throttle')
    expect(throttles).toHaveLength(2)
    // provider google_compute_security_policy: conform_action "allow" only; enforce_on_key IP; rate_limit_threshold { count, interval_sec }
    for (const t of throttles) {
      expect(t.rate_limit_options![0]!).toMatchObject({ conform_action: 'allow', exceed_action: 'deny(429)', enforce_on_key: 'IP' })
    }
    expect(throttles.map((t) => t.rate_limit_options![0]!.rate_limit_threshold[0])).toEqual([
      { count: '${var.cloud_armor_webhook_requests_per_ip_per_minute}', interval_sec: 60 },
      { count: '${var.cloud_armor_requests_per_ip_per_minute}', interval_sec: 60 },
    ])
    const last = rules().at(-1)!
    expect(last).toMatchObject({ action: 'allow', priority: 2147483647 })
    expect(last.match[0]!.config![0]!.src_ip_ranges).toEqual(['*'])
    // provider: a rule's description is at most 64 characters, priorities unique
    for (const r of rules()) expect((r.description ?? '').length, r.description).toBeLessThanOrEqual(64)
    expect(new Set(rules().map((r) => r.priority)).size).toBe(rules().length)
  })

  /**
   * The sizing of docs/capacity.md: one address may carry this many tenants' (or API keys') full
   * contract rate. Cloud Armor counts each backend service separately, so each backend's own
   * per-credential load counts: edge-ingest takes pushes (per key), portal-api reads (per key)
   * and link mints (per customer).
   */
  const CREDENTIALS_PER_ADDRESS = 25
  const perMinute = (w: { limit: number; seconds: number }) => (w.limit * 60) / w.seconds

  // mutation: lower the variable's default to 1,000, or raise a contract limit in code without it
  it('lets 25 tenants at the contract limits through one address, on each backend', () => {
    const variable = tf.variable.cloud_armor_requests_per_ip_per_minute![0]!
    const short = (ws: readonly { name: string; limit: number; seconds: number }[]) => ws.find((w) => w.seconds === 60)!
    const edgePerTenant = perMinute(short(PUSH_WINDOWS))
    const portalPerTenant = perMinute(short(READ_WINDOWS)) + perMinute(LINK_MINT_WINDOW)
    expect(edgePerTenant).toBe(120)
    expect(portalPerTenant).toBe(240)
    expect(variable.default as number).toBeGreaterThanOrEqual(CREDENTIALS_PER_ADDRESS * Math.max(edgePerTenant, portalPerTenant))
    // the validation refuses a value below one key at its limit, and above Cloud Armor's maximum
    expect(String((variable.validation as Array<{ condition: string }>)[0]!.condition)).toBe(
      '${var.cloud_armor_requests_per_ip_per_minute >= 120 && var.cloud_armor_requests_per_ip_per_minute <= 1000000}',
    )
  })

  // mutation: drop the rule at priority 1000, narrow it to '/v1/contacts/partnercrm', or make it `allow` again
  it('gives the inbound webhooks their own, higher per-address throttle, and the general one to every other route', () => {
    const edge = readFileSync(join(ROOT, 'services/edge-ingest/src/routes/push.ts'), 'utf8')
    const fallbacks = readFileSync(join(ROOT, 'services/portal-api/src/routes/fallbacks.ts'), 'utf8')
    // the routes exist as named (a renamed route would leave the exemption pointing nowhere)
    for (const route of ["'/v1/contacts/partnercrm'", "'/v1/contacts/:sourceId'"]) expect(edge).toContain(route)
    expect(fallbacks).toContain("'/api/contacts/webhook/:sourceId'")
    for (const path of ['/v1/contacts/partnercrm', '/v1/contacts/src_123', '/api/contacts/webhook/src_123']) {
      // a made-up source id costs a lookup: one address is bounded there too, far above the general bound
      expect(firstRule(path).action, path).toBe('throttle')
      expect(firstRule(path).priority, path).toBeLessThan(2000)
      expect(firstRule(path).rate_limit_options![0]!.rate_limit_threshold[0]!.count, path).toBe('${var.cloud_armor_webhook_requests_per_ip_per_minute}')
    }
    const webhook = tf.variable.cloud_armor_webhook_requests_per_ip_per_minute![0]!.default as number
    expect(webhook).toBeGreaterThanOrEqual(10 * (tf.variable.cloud_armor_requests_per_ip_per_minute![0]!.default as number))
    for (const path of [
      '/v1/contacts',
      '/api/contacts',
      '/api/contacts/links',
      '/api/v1/contacts',
      '/api/v1/admin/accounts',
      '/api/v1/schema',
      '/healthz',
      '/',
    ]) {
      expect(firstRule(path).action, path).toBe('throttle')
      expect(firstRule(path).priority, path).toBe(2000)
    }
  })

  it('writes the sizing down where operators look', () => {
    const capacity = readFileSync(join(CHECK_ROOT, 'docs/capacity.md'), 'utf8')
    expect(capacity).toMatch(/## Cloud Armor/)
    expect(capacity).toContain('cloud_armor_requests_per_ip_per_minute')
    expect(capacity).toContain('6,000')
  })
})
