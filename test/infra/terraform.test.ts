import { describe, expect, it, beforeAll } from 'vitest'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadTerraform, resource, allText, localExpr, INFRA_DIR, type Terraform } from './hcl.ts'
import { FIRESTORE_COMPOSITE_INDEXES, FIRESTORE_TTL_FIELDS } from '@lsv/shared/adapters/google/firestore-indexes.ts'
import { QUEUE_RETRY_CONFIG } from '@lsv/shared/adapters/google/cloud-tasks-scheduler.ts'
import { POOL_QUEUE_RATE } from '@lsv/shared/domain/webhooks/queue-pool.ts'

const SERVICES = ['edge-ingest', 'portal-api', 'upsert-worker', 'webhook-dispatcher']
let tf: Terraform

beforeAll(async () => {
  tf = await loadTerraform()
})

function first<T = Record<string, unknown>>(v: unknown): T {
  return (Array.isArray(v) ? v[0] : v) as T
}

describe('terraform (infra/)', () => {
  it('is formatted (terraform fmt -check)', () => {
    const which = spawnSync('terraform', ['version'], { encoding: 'utf8' })
    if (which.error) {
      // terraform is part of this machine image; say so loudly rather than pass silently
      throw new Error('terraform binary not found: install it to check formatting')
    }
    const res = spawnSync('terraform', ['fmt', '-check', '-recursive', INFRA_DIR], { encoding: 'utf8' })
    expect(res.stdout.trim(), `unformatted files: ${res.stdout}`).toBe('')
    expect(res.status).toBe(0)
  })

  it('declares every variable and output with a description', () => {
    for (const [name, [v]] of Object.entries(tf.variable)) expect(v!.description, `variable ${name}`).toBeTruthy()
    for (const [name, [o]] of Object.entries(tf.output)) expect(o!.description, `output ${name}`).toBeTruthy()
    expect(Object.keys(tf.output)).toEqual(expect.arrayContaining(['load_balancer_ip', 'dns_records', 'portal_base_url', 'service_urls']))
  })

  it('runs four Cloud Run v2 services, each with its own service account', () => {
    const run = resource(tf, 'google_cloud_run_v2_service', 'service')
    const settings = allText(tf)
    for (const s of SERVICES) expect(settings).toContain(`"${s}"`)
    const template = first(run.template)
    expect(template.service_account).toBe('${local.sa[each.key]}')
    const sa = resource(tf, 'google_service_account', 'service')
    expect(sa.for_each).toBe('${toset(local.service_names)}')
    expect(tf.text['service-accounts.tf']).toMatch(/service_names\s*=\s*\["edge-ingest", "portal-api", "upsert-worker", "webhook-dispatcher"\]/)
    // only the image is left to Cloud Build
    expect(JSON.stringify(run.lifecycle)).toContain('template[0].containers[0].image')
    // secrets come from Secret Manager, not literals
    expect(tf.text['cloud-run.tf']).toContain('secret_key_ref')
  })

  it('gives every subscription a retry policy and a dead-letter topic with its own subscription', () => {
    const subs = tf.resource.google_pubsub_subscription ?? {}
    expect(Object.keys(subs).length).toBeGreaterThanOrEqual(3)
    for (const [name, [body]] of Object.entries(subs)) {
      expect(body!.retry_policy, `${name} retry_policy`).toBeTruthy()
      if (name === 'dead_letter') continue // the dead-letter subscriptions themselves
      // the dead letters' alerts subscription: its only possible dead-letter topic is its own
      // source, where a failing report would loop (the choice is documented in pubsub.tf)
      if (name === 'dead_letter_alerts') {
        expect(body!.dead_letter_policy, `${name} dead_letter_policy`).toBeUndefined()
        continue
      }
      expect(body!.dead_letter_policy, `${name} dead_letter_policy`).toBeTruthy()
    }
    const dlTopics = resource(tf, 'google_pubsub_topic', 'dead_letter')
    const dlSubs = resource(tf, 'google_pubsub_subscription', 'dead_letter')
    expect(dlTopics.for_each).toBe(dlSubs.for_each)
  })

  it('authenticates push subscriptions with OIDC: the pubsub-push identity, the target service URL as audience', () => {
    const push = resource(tf, 'google_pubsub_subscription', 'push')
    const cfg = first(push.push_config)
    const token = first(cfg.oidc_token)
    expect(token.service_account_email).toBe('${google_service_account.pubsub_push.email}')
    // the audience is the URL of the service the push goes to (what its PUSH_AUDIENCE says)
    expect(token.audience).toBe('${local.service_url[each.value.service]}')
    expect(String(cfg.push_endpoint).startsWith('${local.service_url[each.value.service]}')).toBe(true)
    expect(tf.text['pubsub.tf']).toMatch(/"contact-batches"\s*=\s*\{ service = "upsert-worker"/)
    expect(tf.text['pubsub.tf']).toMatch(/"visit-events"\s*=\s*\{ service = "webhook-dispatcher"/)
  })

  it('pushes wrapped messages (no subscription sets no_wrapper: the services read the envelope)', () => {
    for (const [name, [body]] of Object.entries(tf.resource.google_pubsub_subscription ?? {})) {
      const cfg = body!.push_config === undefined ? undefined : first(body!.push_config)
      expect(cfg?.no_wrapper, `google_pubsub_subscription.${name} sets no_wrapper`).toBeUndefined()
    }
  })

  it('alerts on the backlog of every subscription that consumes a main topic, and on every dead-letter subscription', () => {
    const consuming = String(localExpr(tf, 'consuming_subscriptions'))
    for (const name of Object.keys(tf.resource.google_pubsub_subscription ?? {})) {
      if (name === 'dead_letter') continue
      expect(consuming, `google_pubsub_subscription.${name} is not in the backlog alert`).toContain(`google_pubsub_subscription.${name}`)
    }
    const backlog = first(resource(tf, 'google_monitoring_alert_policy', 'push_backlog').conditions)
    const filter = String(first(backlog.condition_threshold).filter)
    expect(filter).toMatch(/oldest_unacked_message_age/)
    // names are letters, digits and '-': an alternation of them matches exactly these subscriptions
    expect(filter).toContain('subscription_id = monitoring.regex.full_match("${join("|", local.consuming_subscriptions)}")')
    // dead-letter subscriptions are named <topic>-dead-letter-sub and matched by the other alert
    expect(resource(tf, 'google_pubsub_subscription', 'dead_letter').name).toBe('${each.value}-dead-letter-sub')
    const dead = first(resource(tf, 'google_monitoring_alert_policy', 'dead_letters').conditions)
    expect(String(first(dead.condition_threshold).filter)).toContain('monitoring.regex.full_match(".*-dead-letter-sub")')
  })

  it('sets the per-endpoint delivery rate from a validated variable and keeps no unused queue or variable', () => {
    // endpoint queues are created at run time; Terraform creates only the shared pool (tasks.tf),
    // named as the code names them (queue-pool.ts poolQueueName), with the code's retry plan
    // mutation: a second queue resource, or the pool at another rate or retry plan
    expect(Object.keys(tf.resource.google_cloud_tasks_queue ?? {})).toEqual(['delivery_pool'])
    const pool = resource(tf, 'google_cloud_tasks_queue', 'delivery_pool')
    expect(pool.name).toBe('${each.key}')
    expect(String(localExpr(tf, 'task_queue_pool'))).toContain('format("webhook-pool-%02d", i)')
    expect(first(pool.rate_limits)).toEqual({
      max_dispatches_per_second: POOL_QUEUE_RATE.maxDispatchesPerSecond,
      max_concurrent_dispatches: POOL_QUEUE_RATE.maxConcurrentDispatches,
    })
    expect(first(pool.retry_config)).toEqual({
      max_attempts: QUEUE_RETRY_CONFIG.maxAttempts,
      min_backoff: `${QUEUE_RETRY_CONFIG.minBackoff.seconds}s`,
      max_backoff: `${QUEUE_RETRY_CONFIG.maxBackoff.seconds}s`,
      max_doublings: QUEUE_RETRY_CONFIG.maxDoublings,
      max_retry_duration: `${QUEUE_RETRY_CONFIG.maxRetryDuration.seconds}s`,
    })
    const rate = tf.variable.webhook_endpoint_rate?.[0]
    expect(rate).toMatchObject({ type: '${number}', default: 100 })
    expect(String(first(rate!.validation).condition)).toBe('${var.webhook_endpoint_rate >= 1 && var.webhook_endpoint_rate <= 500}')
    const text = allText(tf)
    for (const name of Object.keys(tf.variable)) expect(text, `var.${name} is declared but never used`).toContain(`var.${name}`)
  })

  it('has an index for every composite Firestore query the code runs, and every TTL policy', () => {
    const indexes = tf.resource.google_firestore_index ?? {}
    const declared = Object.values(indexes).map(([b]) => ({
      collection: b!.collection,
      fields: (b!.fields as Array<{ field_path: string; order: string }>).map((f) => `${f.field_path}:${f.order}`),
    }))
    for (const idx of FIRESTORE_COMPOSITE_INDEXES) {
      const want = idx.fields.map((f) => `${f.fieldPath}:${f.order}`)
      const found = declared.some((d) => d.collection === idx.collectionGroup && JSON.stringify(d.fields) === JSON.stringify(want))
      expect(found, `missing google_firestore_index for ${idx.collectionGroup} ${want.join(',')}`).toBe(true)
    }
    const ttl = resource(tf, 'google_firestore_field', 'ttl')
    for (const t of FIRESTORE_TTL_FIELDS) {
      expect(String(ttl.for_each), `TTL for ${t.collectionGroup}`).toContain(`"${t.collectionGroup}"`)
      expect(ttl.field).toBe(t.field)
    }
  })

  it('keeps the operator token, key pepper and link signing keys in Secret Manager', () => {
    const text = tf.text['secrets.tf']!
    for (const s of ['operator-token', 'key-pepper', 'link-signing-keys']) expect(text).toContain(`"${s}"`)
    expect(tf.resource.google_secret_manager_secret_iam_member).toBeTruthy()
  })

  it('serves the edge wildcard through a global external HTTPS load balancer with a serverless NEG', () => {
    const neg = resource(tf, 'google_compute_region_network_endpoint_group', 'neg')
    expect(neg.network_endpoint_type).toBe('SERVERLESS')
    const cert = resource(tf, 'google_certificate_manager_certificate', 'edge_wildcard')
    expect(JSON.stringify(cert.managed)).toContain('*.${var.edge_domain}')
    const rule = resource(tf, 'google_compute_global_forwarding_rule', 'https')
    expect(rule.load_balancing_scheme).toBe('EXTERNAL_MANAGED')
    expect(resource(tf, 'google_compute_target_https_proxy', 'https').certificate_map).toBeTruthy()
  })

  it('feeds BigQuery from contact-changes through a BigQuery subscription, with a latest-row view', () => {
    const sub = resource(tf, 'google_pubsub_subscription', 'contact_changes_bigquery')
    expect(first(sub.bigquery_config).use_table_schema).toBe(true)
    const view = resource(tf, 'google_bigquery_table', 'contacts_latest')
    expect(first(view.view).query).toMatch(/ROW_NUMBER\(\) OVER \(PARTITION BY account_id, contact_id ORDER BY changed_at DESC\)/)
    expect(existsSync(join(INFRA_DIR, 'bigquery', 'contact_changes.schema.json'))).toBe(true)
    const schema = JSON.parse(readFileSync(join(INFRA_DIR, 'bigquery', 'contact_changes.schema.json'), 'utf8')) as Array<{ name: string }>
    const names = schema.map((f) => f.name)
    for (const n of ['account_id', 'contact_id', 'changed_at']) expect(names).toContain(n)
  })
})
