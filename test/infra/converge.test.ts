import { beforeAll, describe, expect, it } from 'vitest'
import { dependsOnTransitively, loadTerraform, references, resource, resources, type Terraform } from './hcl.ts'

/**
 * One `terraform apply` on an empty project has to converge. Terraform creates a resource after
 * everything it refers to (attribute references and depends_on), so these invariants are about
 * that graph, read from infra/ itself.
 */
let tf: Terraform
beforeAll(async () => {
  tf = await loadTerraform()
})

const ENABLED = 'google_project_service.enabled'

describe('ordering on an empty project', () => {
  it('every resource comes after the APIs are enabled, directly or through what it refers to', () => {
    const orphans = resources(tf)
      .map(([address]) => address)
      .filter((address) => address !== ENABLED && !dependsOnTransitively(tf, address).has(ENABLED))
    expect(orphans, 'resources that could be created before their API is enabled').toEqual([])
  })

  it('the check above sees a resource that is missing its API dependency (control)', async () => {
    const broken = await loadTerraform()
    const sa = broken.resource.google_service_account!.service![0]!
    delete sa.depends_on
    expect(dependsOnTransitively(broken, 'google_service_account.service').has(ENABLED)).toBe(false)
  })

  it('a Cloud Run revision starts only after the first version of every secret it reads exists', () => {
    const run = resource(tf, 'google_cloud_run_v2_service', 'service')
    expect(references(tf, run.depends_on)).toContain('google_secret_manager_secret_version.initial')
    // one first version per secret, for the same set of secrets
    const versions = resource(tf, 'google_secret_manager_secret_version', 'initial')
    const secrets = resource(tf, 'google_secret_manager_secret', 'platform')
    expect(versions.for_each).toBe(secrets.for_each)
  })

  it('Cloud Run and the BigQuery subscription wait until the grants they check at creation apply', () => {
    const sleep = resource(tf, 'time_sleep', 'iam_propagation')
    const waitedFor = references(tf, sleep.depends_on)
    // the run-time accounts read their secrets when a revision starts
    expect(waitedFor).toContain('google_secret_manager_secret_iam_member.reader')
    // creating a BigQuery subscription checks that the Pub/Sub agent may write the table
    expect(waitedFor).toContain('google_bigquery_dataset_iam_member.pubsub_writer')
    expect(Number.parseInt(String(sleep.create_duration), 10)).toBeGreaterThanOrEqual(60)
    expect(references(tf, resource(tf, 'google_cloud_run_v2_service', 'service').depends_on)).toContain('time_sleep.iam_propagation')
    expect(references(tf, resource(tf, 'google_pubsub_subscription', 'contact_changes_bigquery').depends_on)).toContain('time_sleep.iam_propagation')
  })

  it('the SLOs wait until the log-based metrics they read have had time to become usable', () => {
    const sleep = resource(tf, 'time_sleep', 'log_metrics_usable')
    const waitedFor = references(tf, sleep.depends_on)
    expect(Number.parseInt(String(sleep.create_duration), 10)).toBeGreaterThanOrEqual(60)
    for (const name of ['push_to_visible', 'delivery_success']) {
      const slo = resource(tf, 'google_monitoring_slo', name)
      expect(references(tf, slo.depends_on), name).toContain('time_sleep.log_metrics_usable')
      // every log-based metric the SLO's filters name is one the wait comes after
      const metrics = [...JSON.stringify(slo.request_based_sli).matchAll(/google_logging_metric\.(\w+)\.name/g)].map((m) => `google_logging_metric.${m[1]}`)
      expect(metrics.length, name).toBeGreaterThan(0)
      for (const metric of metrics) expect(waitedFor, `${name} reads ${metric}`).toContain(metric)
    }
  })

  it('every grant to the Pub/Sub service agent comes after the agent is created', () => {
    const identity = resource(tf, 'google_project_service_identity', 'pubsub')
    expect(identity.service).toBe('pubsub.googleapis.com')
    const grants = resources(tf).filter(([address, body]) => address.includes('_iam_member.') && JSON.stringify(body.member).includes('local.pubsub_agent'))
    expect(grants.length).toBeGreaterThanOrEqual(4)
    for (const [address] of grants) expect(dependsOnTransitively(tf, address), address).toContain('google_project_service_identity.pubsub')
  })
})
