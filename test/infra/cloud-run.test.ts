import { beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CHECK_ROOT, loadTerraform, localExpr, resource, resources, type Terraform } from './hcl.ts'

/**
 * The Cloud Run services as Google Cloud will accept and keep them: public without an IAM member
 * (Domain Restricted Sharing), no revision name a later apply could collide with, and liveness
 * probes that a busy instance passes.
 */
let tf: Terraform
beforeAll(async () => {
  tf = await loadTerraform()
})

const PUBLIC_MEMBERS = ['allUsers', 'allAuthenticatedUsers']

/** every (path, string) in a parsed body, so a member hidden in a nested block or list is seen too */
function strings(value: unknown, path = ''): Array<[string, string]> {
  if (typeof value === 'string') return [[path, value]]
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`))
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, path ? `${path}.${k}` : k))
  return []
}

/** IAM members granted to everyone, in any resource, local or output of a parsed infra/ */
function publicMembers(t: Terraform): string[] {
  const found: string[] = []
  const scan = (where: string, body: unknown) => {
    for (const [path, s] of strings(body)) {
      // a member attribute, a members list, or a literal anywhere (a for_each over members)
      if (PUBLIC_MEMBERS.some((m) => s === m || s.includes(`"${m}"`) || s.includes(`'${m}'`))) found.push(`${where}.${path}`)
    }
  }
  for (const [address, body] of resources(t)) scan(address, body)
  for (const block of t.locals) scan('locals', block)
  for (const [name, [body]] of Object.entries(t.data.google_iam_policy ?? {})) scan(`data.google_iam_policy.${name}`, body)
  return found
}

describe('Cloud Run services in an organization with secure-by-default policies', () => {
  // mutation: put back `member = "allUsers"` on google_cloud_run_v2_service_iam_member.public
  it('grants nothing to allUsers or allAuthenticatedUsers (Domain Restricted Sharing refuses both)', () => {
    expect(publicMembers(tf)).toEqual([])
  })

  it('the scan above finds a public member (control)', async () => {
    const broken = await loadTerraform()
    broken.resource.google_cloud_run_v2_service_iam_member!.public = [{ role: 'roles/run.invoker', member: 'allUsers' }]
    broken.locals.push({ viewers: '${toset(["allAuthenticatedUsers"])}' })
    expect(publicMembers(broken)).toEqual(['google_cloud_run_v2_service_iam_member.public.member', 'locals.viewers'])
  })

  // mutations: `public = false` on edge-ingest, or `invoker_iam_disabled = true` for every service
  it('turns the invoker check off exactly on the two services behind the load balancer', () => {
    const run = resource(tf, 'google_cloud_run_v2_service', 'service')
    expect(run.invoker_iam_disabled).toBe('${each.value.public}')
    const settings = localExpr(tf, 'service_settings') as Record<string, { public: boolean; ingress: string }>
    const behindLb = (resource(tf, 'google_compute_region_network_endpoint_group', 'neg').for_each as string).match(/"([a-z-]+)"/g)!.map((s) => s.slice(1, -1))
    expect(behindLb.sort()).toEqual(['edge-ingest', 'portal-api'])
    for (const [name, s] of Object.entries(settings)) {
      expect(s.public, name).toBe(behindLb.includes(name))
      // a service without the check must not be reachable but through the load balancer
      if (s.public) expect(s.ingress, name).toBe('INGRESS_TRAFFIC_INTERNAL_LOAD_BALANCER')
      else expect(s.ingress, name).toBe('INGRESS_TRAFFIC_INTERNAL_ONLY')
    }
    // the internal services keep IAM: only the push and task identities invoke them
    const invokers = Object.entries(tf.resource.google_cloud_run_v2_service_iam_member ?? {})
      .filter(([, [body]]) => body!.role === 'roles/run.invoker')
      .map(([name]) => name)
      .sort()
    expect(invokers).toEqual(['pubsub_invoker', 'tasks_invoker'])
  })

  it('keeps the invoker check on for every service that trusts the front end (INTERNAL_AUTH=front-end)', () => {
    // such a service accepts a token whose signature Cloud Run stripped: that is sound only while
    // Cloud Run's invoker check is on for it (mutation: `public = true` on upsert-worker, or
    // `invoker_iam_disabled = true` → any caller inside the project could present a made-up token)
    const run = resource(tf, 'google_cloud_run_v2_service', 'service')
    expect(run.invoker_iam_disabled).toBe('${each.value.public}')
    const settings = localExpr(tf, 'service_settings') as Record<string, { public: boolean }>
    const env = (Object.assign({}, ...tf.locals) as { service_env: Record<string, string> }).service_env
    const trusting = Object.keys(env).filter((service) => /\bINTERNAL_AUTH\s*=\s*"front-end"/.test(String(env[service])))
    expect(trusting.sort()).toEqual(['upsert-worker', 'webhook-dispatcher'])
    for (const service of trusting) expect({ service, public: settings[service]?.public }).toEqual({ service, public: false })
  })

  it('needs a provider that knows invoker_iam_disabled (google 6.8.0, CHANGELOG "cloudrunv2: added invoker_iam_disabled")', () => {
    const providers = tf.terraform.flatMap((b) => (b.required_providers as Array<Record<string, { version: string }>>) ?? [])
    const google = providers.map((p) => p.google?.version).find((v) => v !== undefined)
    if (!google) throw new Error('infra/ declares no google provider version')
    const lower = google
      .match(/>=\s*(\d+)\.(\d+)\.(\d+)/)!
      .slice(1)
      .map(Number) as [number, number, number]
    expect(lower[0] * 1e6 + lower[1] * 1e3 + lower[2], google).toBeGreaterThanOrEqual(6_008_000)
  })
})

describe('revision names', () => {
  // mutation: add template[0].revision back to ignore_changes
  it('Terraform does not keep a revision name set outside it (it would re-send an existing name)', () => {
    const lifecycle = (resource(tf, 'google_cloud_run_v2_service', 'service').lifecycle as Array<{ ignore_changes: string[] }>)[0]!
    expect(lifecycle.ignore_changes).toContain('${template[0].containers[0].image}')
    expect(lifecycle.ignore_changes.join(' ')).not.toMatch(/revision/)
    expect(strings(resource(tf, 'google_cloud_run_v2_service', 'service').template).filter(([p]) => /(^|\.)revision$/.test(p))).toEqual([])
  })

  // mutation: restore `--revision-suffix=rot-$(date …)` in docs/operations.md
  it('no documented command names a revision: restarts change a template label and let Cloud Run name the revision', () => {
    // what an operator runs: the docs' sh blocks and inline gcloud commands (prose may name the flag)
    const commands = (markdown: string) => [
      ...[...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!),
      ...[...markdown.matchAll(/`(gcloud [^`\n]+)`/g)].map((m) => m[1]!),
    ]
    for (const file of ['docs/operations.md', 'docs/deploy.md']) {
      const run = commands(readFileSync(join(CHECK_ROOT, file), 'utf8'))
      expect(run.length, file).toBeGreaterThan(0)
      for (const c of run) expect(c, file).not.toMatch(/--revision-suffix|--tag[= ]/)
    }
    for (const file of ['deploy/roll-out.sh', 'cloudbuild.yaml']) expect(readFileSync(join(CHECK_ROOT, file), 'utf8'), file).not.toMatch(/--revision-suffix/)
    const ops = readFileSync(join(CHECK_ROOT, 'docs/operations.md'), 'utf8')
    expect(ops).toMatch(/gcloud run services update portal-api --region=\$REGION --update-labels=lsv-restarted-at=\$\(date -u \+%Y%m%d-%H%M%S\)/)
  })
})

describe('probes', () => {
  /**
   * /healthz p99 under saturating load with the batch work on the main thread (how upsert-worker
   * runs on Cloud Run: a push is applied in its request), docs/performance.md "/healthz under
   * load": 421-645 ms; the worst p99 measured in any variant there, 1.09 s.
   */
  const MAIN_THREAD_P99_S = 0.645
  const WORST_P99_S = 1.09

  // mutations: drop timeout_seconds (Cloud Run's default is 1 s), or set it to 1 for upsert-worker
  it('gives every liveness probe an explicit timeout with margin over the measured /healthz p99, below its period', () => {
    const probe = (resource(tf, 'google_cloud_run_v2_service', 'service').template as Array<{ containers: Array<Record<string, unknown>> }>)[0]!.containers[0]!
    const liveness = (probe.liveness_probe as Array<Record<string, unknown>>)[0]!
    expect(liveness).toMatchObject({
      timeout_seconds: '${local.liveness[each.key].timeout}',
      period_seconds: '${local.liveness[each.key].period}',
      failure_threshold: '${local.liveness[each.key].failures}',
    })
    const settings = localExpr(tf, 'liveness') as Record<string, { timeout: number; period: number; failures: number }>
    const services = Object.keys(localExpr(tf, 'service_settings') as object).sort()
    expect(Object.keys(settings).sort()).toEqual(services)
    for (const [name, s] of Object.entries(settings)) {
      expect(s.timeout, `${name}: timeout >= 4x the worst measured p99`).toBeGreaterThanOrEqual(4 * WORST_P99_S)
      expect(s.timeout, `${name}: timeout >= 7x the main-thread p99`).toBeGreaterThanOrEqual(7 * MAIN_THREAD_P99_S)
      // Cloud Run: the timeout must be smaller than the period; the period at most 3600 s
      expect(s.timeout, name).toBeLessThan(s.period)
      expect(s.period, name).toBeLessThanOrEqual(3600)
      // a restart takes at least 30 s of consecutive failures, and a hung process goes within 2 minutes
      expect(s.period * s.failures, name).toBeGreaterThanOrEqual(30)
      expect(s.period * s.failures + s.timeout, name).toBeLessThanOrEqual(120)
    }
    // the worker runs batches on its main thread: it gets the longest grace
    expect(settings['upsert-worker']!.period * settings['upsert-worker']!.failures).toBe(Math.max(...Object.values(settings).map((s) => s.period * s.failures)))
    const startup = (probe.startup_probe as Array<Record<string, number>>)[0]!
    expect(startup.timeout_seconds).toBeLessThan(startup.period_seconds!)
    expect(startup.period_seconds! * startup.failure_threshold!).toBeLessThanOrEqual(240)
  })
})
