import { describe, expect, it, beforeAll } from 'vitest'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { loadTerraform, resource, localExpr, INFRA_DIR, ROOT, CHECK_ROOT, type Terraform } from './hcl.ts'

/**
 * The dashboard, log-based metrics, SLOs and burn-rate alerts of infra/ (docs/operations.md,
 * "Metrics" and "Alerts"), checked statically: each metric reads a field the code really logs,
 * the dashboard shows every metric, each SLO has a fast and a slow burn-rate alert, and the docs
 * say where to look for every alert.
 */
let tf: Terraform

beforeAll(async () => {
  tf = await loadTerraform()
})

function first<T = Record<string, unknown>>(v: unknown): T {
  return (Array.isArray(v) ? v[0] : v) as T
}

/** what the issue asks for: metric name → what it must be */
const METRICS: Record<string, { valueType: 'INT64' | 'DISTRIBUTION'; labels: string[] }> = {
  contact_records: { valueType: 'DISTRIBUTION', labels: ['outcome'] },
  pushes_refused: { valueType: 'INT64', labels: ['status'] },
  contact_apply_lag: { valueType: 'DISTRIBUTION', labels: [] },
  webhook_delivery_attempts: { valueType: 'INT64', labels: ['outcome'] },
  webhook_delivery_latency: { valueType: 'DISTRIBUTION', labels: ['outcome'] },
  webhook_endpoints_disabled: { valueType: 'INT64', labels: [] },
  dead_lettered: { valueType: 'INT64', labels: ['kind'] },
}

/** the code that writes log lines: shared/src and services/<name>/src, tests excluded */
function sourceFiles(): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else if (p.endsWith('.ts') && !p.endsWith('.test.ts')) out.push({ path: p, text: readFileSync(p, 'utf8') })
    }
  }
  walk(join(ROOT, 'shared', 'src'))
  for (const s of readdirSync(join(ROOT, 'services'))) walk(join(ROOT, 'services', s, 'src'))
  return out
}

/** a metric's filter with local.run_logs spelled out */
function filterOf(body: Record<string, unknown>): string {
  return String(body.filter).replace('${local.run_logs}', String(localExpr(tf, 'run_logs')))
}

/** every `jsonPayload.<field>` a metric reads: in its filter, value extractor and label extractors */
function payloadFields(body: Record<string, unknown>): string[] {
  const text = [filterOf(body), body.value_extractor ?? '', JSON.stringify(first(body.label_extractors) ?? {})].join(' ')
  return [...new Set([...text.matchAll(/jsonPayload\.([A-Za-z_]+)/g)].map((m) => m[1]!))]
}

describe('monitoring (infra/): log-based metrics, dashboard, SLOs, burn-rate alerts', () => {
  it('defines each metric the dashboard and SLOs need, distributions with an extractor and buckets', () => {
    const defined = tf.resource.google_logging_metric ?? {}
    expect(Object.keys(defined).sort()).toEqual(Object.keys(METRICS).sort())
    for (const [name, want] of Object.entries(METRICS)) {
      const body = resource(tf, 'google_logging_metric', name)
      expect(body.name, `${name}: the metric type is logging.googleapis.com/user/<name>`).toBe(name)
      // only lines in Cloud Run's shape (a metric over every resource would count other projects' writers too)
      expect(filterOf(body)).toContain('resource.type="cloud_run_revision"')
      const descriptor = first(body.metric_descriptor)
      expect(descriptor.metric_kind).toBe('DELTA')
      expect(descriptor.value_type, name).toBe(want.valueType)
      const labels = ((descriptor.labels as Array<{ key: string }> | undefined) ?? []).map((l) => l.key).sort()
      expect(labels, `${name} labels`).toEqual(want.labels)
      // every label has an extractor, and nothing else does (the API refuses either mismatch)
      expect(Object.keys(first(body.label_extractors) ?? {}).sort(), `${name} label_extractors`).toEqual(want.labels)
      if (want.valueType === 'DISTRIBUTION') {
        expect(String(body.value_extractor), name).toMatch(/^EXTRACT\((jsonPayload|httpRequest)\.[A-Za-z_]+\)$/)
        expect(body.bucket_options, name).toBeTruthy()
      } else {
        // a counter counts lines: a value extractor would be refused
        expect(body.value_extractor, name).toBeUndefined()
      }
    }
  })

  it("reads only log fields the code writes: each jsonPayload field is a key of the event's log line", () => {
    // mutation: rename `lagMs` in handle-batch.ts (or the metric's EXTRACT) → this fails
    const files = sourceFiles()
    for (const name of Object.keys(METRICS)) {
      const body = resource(tf, 'google_logging_metric', name)
      const event = /jsonPayload\.event="([a-z_]+)"/.exec(filterOf(body))?.[1]
      // the files that write this event (event: 'x'); a metric without an event reads fields every line has
      const writers = event ? files.filter((f) => f.text.includes(`event: '${event}'`)) : files.filter((f) => f.path.includes(join('shared', 'src', 'logging')))
      expect(writers.length, `${name}: no code writes event "${event}"`).toBeGreaterThan(0)
      for (const field of payloadFields(body)) {
        const key = new RegExp(`[{,\\s]${field}\\s*[:,}]`)
        expect(
          writers.some((f) => key.test(f.text)),
          `${name} reads jsonPayload.${field}, which ${writers.map((f) => f.path).join(', ')} never write`,
        ).toBe(true)
      }
    }
    // httpRequest.status: the request line's httpRequest object (shared/src/http/request-log.ts)
    expect(filterOf(resource(tf, 'google_logging_metric', 'pushes_refused'))).toContain('httpRequest.status')
    expect(readFileSync(join(ROOT, 'shared/src/http/request-log.ts'), 'utf8')).toMatch(/status: reply\.statusCode/)
  })

  it('filters on outcome values the code really writes', () => {
    // mutation: outcome "success" in the SLO (the code writes "succeeded") → this fails
    const deliver = readFileSync(join(ROOT, 'shared/src/domain/webhooks/deliver.ts'), 'utf8')
    const outcomes = /export type AttemptOutcome = ([^\n]+)/.exec(deliver)![1]!
    const slo = first(first(resource(tf, 'google_monitoring_slo', 'delivery_success').request_based_sli).good_total_ratio)
    const disabled = filterOf(resource(tf, 'google_logging_metric', 'webhook_endpoints_disabled'))
    for (const text of [String(slo.good_service_filter), String(slo.bad_service_filter), disabled]) {
      const value = /outcome="([a-z]+)"/.exec(text)![1]!
      expect(outcomes, `outcome "${value}" is not an AttemptOutcome`).toContain(`'${value}'`)
    }
    const worker = readFileSync(join(ROOT, 'services/upsert-worker/src/handle-batch.ts'), 'utf8')
    for (const kind of ['message', 'records']) expect(worker).toContain(`kind: '${kind}'`)
  })

  it('shows every metric on the dashboard, and nothing that is not defined', () => {
    // mutation: drop a widget, or rename a metric only in log-metrics.tf → this fails
    const dashboard = resource(tf, 'google_monitoring_dashboard', 'platform')
    expect(dashboard.dashboard_json).toBe('${file("${path.module}/dashboards/platform.json")}')
    const json = readFileSync(join(INFRA_DIR, 'dashboards', 'platform.json'), 'utf8')
    const parsed = JSON.parse(json) as { gridLayout: { widgets: Array<{ title: string }> } }
    const widgets = parsed.gridLayout.widgets.map((w) => JSON.stringify(w))
    for (const name of Object.keys(METRICS)) {
      const shown = widgets.some((w) => w.includes(`logging.googleapis.com/user/${name}\\"`) || w.includes(`logging_googleapis_com:user_${name}_`))
      expect(shown, `no widget shows ${name}`).toBe(true)
    }
    const referenced = [...json.matchAll(/logging\.googleapis\.com\/user\/([a-z_]+)|logging_googleapis_com:user_([a-z_]+?)_(?:sum|count|bucket)\b/g)].map(
      (m) => m[1] ?? m[2],
    )
    for (const name of referenced) expect(METRICS, `the dashboard reads undefined metric ${name}`).toHaveProperty(name!)
    // Pub/Sub's own dead-lettering (push subscriptions) has no log line: its metric is shown too
    expect(json).toContain('pubsub.googleapis.com/subscription/dead_letter_message_count')
    // the JSON names metrics by string: the dashboard must be ordered after each of them
    const after = JSON.stringify(dashboard.depends_on)
    for (const name of Object.keys(METRICS)) expect(after, `depends_on google_logging_metric.${name}`).toContain(`google_logging_metric.${name}`)
  })

  it('has the two SLOs on the platform service, over the log-based metrics', () => {
    const latency = resource(tf, 'google_monitoring_slo', 'push_to_visible')
    const success = resource(tf, 'google_monitoring_slo', 'delivery_success')
    for (const slo of [latency, success]) {
      expect(slo.service).toBe('${google_monitoring_custom_service.platform.service_id}')
      expect(Number(slo.goal)).toBeGreaterThan(0)
      expect(Number(slo.goal)).toBeLessThanOrEqual(0.999)
      expect(Number(slo.rolling_period_days)).toBeLessThanOrEqual(30)
    }
    // push-to-visible: a distribution cut of the lag whose bound is a bucket bound (else the count is approximate)
    const cut = first(first(latency.request_based_sli).distribution_cut)
    expect(cut.distribution_filter).toBe('metric.type="logging.googleapis.com/user/${google_logging_metric.contact_apply_lag.name}" ${local.run_logs}')
    const max = Number(first(cut.range).max)
    const bounds = first(first(resource(tf, 'google_logging_metric', 'contact_apply_lag').bucket_options).explicit_buckets).bounds as number[]
    expect(bounds, 'the SLO bound must be a bucket bound').toContain(max)
    // delivery success: exactly two of good/bad/total (the API refuses one or three)
    const ratio = first(first(success.request_based_sli).good_total_ratio)
    expect(Object.keys(ratio).filter((k) => k.endsWith('_service_filter'))).toHaveLength(2)
    for (const f of [ratio.good_service_filter, ratio.bad_service_filter]) {
      expect(String(f)).toContain('metric.type="logging.googleapis.com/user/${google_logging_metric.webhook_delivery_attempts.name}"')
    }
  })

  it('alerts on each SLO with a fast and a slow multiwindow burn rate', () => {
    // mutation: drop an SLO from local.slos, or the short-window condition, or set the fast threshold to 1 → this fails
    expect(String(localExpr(tf, 'slo_burn_alerts'))).toContain('for slo_key, slo in local.slos')
    const slos = localExpr(tf, 'slos') as Record<string, string>
    expect(Object.values(slos).sort()).toEqual(['${google_monitoring_slo.delivery_success}', '${google_monitoring_slo.push_to_visible}'])
    const rates = localExpr(tf, 'burn_rates') as Record<string, { long: string; short: string; threshold: number }>
    const minutes = (d: string) => Number(/^(\d+)m$/.exec(d)![1])
    const budgetMinutes = 30 * 24 * 60
    // fraction of a 30-day budget the long window spends at the threshold: 2 % (fast), 5 % (slow)
    const spent = (r: { long: string; threshold: number }) => Math.round(((r.threshold * minutes(r.long)) / budgetMinutes) * 1000) / 1000
    expect(spent(rates.fast!)).toBe(0.02)
    expect(spent(rates.slow!)).toBe(0.05)
    for (const r of Object.values(rates)) expect(minutes(r.long) / minutes(r.short)).toBe(12)

    const policy = resource(tf, 'google_monitoring_alert_policy', 'slo_burn')
    expect(policy.for_each).toBe('${local.slo_burn_alerts}')
    expect(policy.combiner).toBe('AND')
    const filters = (policy.conditions as Array<Record<string, unknown>>).map((c) => String(first(c.condition_threshold).filter))
    expect(filters).toEqual([
      'select_slo_burn_rate("${each.value.slo}", "${each.value.long}")',
      'select_slo_burn_rate("${each.value.slo}", "${each.value.short}")',
    ])
    for (const c of policy.conditions as Array<Record<string, unknown>>) {
      const t = first(c.condition_threshold)
      // an SLO condition uses only the filter: aggregations are refused
      expect(t.aggregations).toBeUndefined()
      expect(t.comparison).toBe('COMPARISON_GT')
      expect(t.threshold_value).toBe('${each.value.threshold}')
    }
    expect(policy.notification_channels).toBe('${local.channels}')
  })

  it('docs/operations.md says where to look for every alert', () => {
    // mutation: add an alert policy without a row in the docs' alert table → this fails
    const docs = readFileSync(join(CHECK_ROOT, 'docs', 'operations.md'), 'utf8')
    const section = docs.slice(docs.indexOf('## Alerts'))
    for (const [name, [body]] of Object.entries(tf.resource.google_monitoring_alert_policy ?? {})) {
      if (name === 'slo_burn') {
        for (const slo of Object.keys(localExpr(tf, 'slos') as object)) {
          for (const speed of Object.keys(localExpr(tf, 'burn_rates') as object)) expect(section, `${slo}_${speed}`).toContain(`\`${slo}_${speed}\``)
        }
      } else {
        expect(section, `alert "${body!.display_name}"`).toContain(String(body!.display_name))
      }
    }
  })
})
