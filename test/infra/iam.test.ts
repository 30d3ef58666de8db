import { beforeAll, describe, expect, it } from 'vitest'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parse } from 'yaml'
import { SERVICE_NAMES, SERVICE_NEEDS } from '@lsv/shared/config/services.ts'
import { loadTerraform, localExpr, references, resource, resources, ROOT, CHECK_ROOT, type Terraform } from './hcl.ts'
import { reachableModules } from './imports.ts'

/**
 * Least privilege, read from infra/ and held against the code: each grant exists because some
 * code path needs it, and the code paths that need one have it.
 */
let tf: Terraform
beforeAll(async () => {
  tf = await loadTerraform()
})

type Body = Record<string, unknown>

/** every .ts file below a folder (node_modules left out) */
const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.split('/').includes('node_modules'))
    .map((f) => join(dir, f))
const iamMembers = (): Array<[string, Body]> => resources(tf).filter(([address]) => /_iam_member\./.test(address))

describe('secrets: each service reads exactly what it uses', () => {
  // each secret read through the API at run time, and the module whose code reads it
  const RUNTIME_READ_BY: Record<string, string> = {
    'link-signing-keys': 'shared/src/domain/links/signing-keys.ts',
    'operator-events-secret': 'shared/src/domain/operations/target.ts',
  }
  /**
   * A reader the composition root loads lazily for every service (platform/deps.ts
   * `deliveryTargets`: the operator's endpoint), but that only one caller ever asks for: a
   * service reads the secret only if it also runs that caller (the delivery job, the dispatcher's).
   * The test below holds the gate itself: that lookup is called from that module alone.
   */
  const CALLED_ONLY_FROM: Record<string, { caller: string; call: RegExp }> = {
    'operator-events-secret': { caller: 'shared/src/domain/webhooks/deliver.ts', call: /\bdeliveryTargets\.get\(/ },
  }
  it('a lazily loaded reader is asked for by its one caller only', () => {
    for (const { caller, call } of Object.values(CALLED_ONLY_FROM)) {
      const callers = tsFiles(join(ROOT, 'shared', 'src'))
        .concat(tsFiles(join(ROOT, 'services')))
        .filter((f) => call.test(readFileSync(f, 'utf8')))
        .map((f) => relative(ROOT, f))
      expect(callers).toEqual([caller])
    }
  })
  it('the services that read a secret through the API (link-signing-keys, operator-events-secret) are the ones whose code loads it', () => {
    const declared = localExpr(tf, 'runtime_secret_readers') as Record<string, string[]>
    expect(Object.keys(declared).sort()).toEqual(Object.keys(RUNTIME_READ_BY).sort())
    for (const [secret, module] of Object.entries(RUNTIME_READ_BY)) {
      const gate = CALLED_ONLY_FROM[secret]
      const readersInCode = SERVICE_NAMES.filter((s) => {
        const reached = reachableModules(`services/${s}/src/server.ts`)
        return reached.has(module) && (gate === undefined || reached.has(gate.caller))
      })
      expect(readersInCode.length, secret).toBeGreaterThan(0)
      // a grant to a service that never reads it, or a reader without one, fails here
      expect([...declared[secret]!].sort(), secret).toEqual([...readersInCode].sort())
    }
  })

  it('secretAccessor grants are derived from service_secret_env and those run-time readers, and nothing else grants on secrets', () => {
    const secretGrants = iamMembers().filter(([address]) => address.startsWith('google_secret_manager_secret_iam_member.'))
    expect(secretGrants.map(([a]) => a)).toEqual(['google_secret_manager_secret_iam_member.reader'])
    const reader = resource(tf, 'google_secret_manager_secret_iam_member', 'reader')
    expect(reader.role).toBe('roles/secretmanager.secretAccessor')
    expect(reader.for_each).toBe('${local.secret_grants}')
    const formula = String(localExpr(tf, 'secret_grants'))
    expect(formula).toMatch(/for \w+, \w+ in local\.service_secret_env/)
    expect(formula).toMatch(/for \w+, \w+ in local\.runtime_secret_readers/)
    // no other source of readers (a hand-kept second list)
    expect(formula.match(/local\.[a-z_]+/g)!.sort()).toEqual(['local.runtime_secret_readers', 'local.service_secret_env'])
    // and no role that writes secrets: no route adds versions (rotation is an operator's gcloud)
    for (const [address, body] of iamMembers()) expect(String(body.role), address).not.toMatch(/secretVersionAdder|secretVersionManager|secretmanager\.admin/)
  })
})

describe('Cloud Tasks: whoever creates delivery tasks may do so, nobody more', () => {
  const creators = SERVICE_NAMES.filter((s) => SERVICE_NEEDS[s].createsTasks).sort()

  it('the custom role holds exactly the permissions of the calls the Cloud Tasks adapter makes', () => {
    const adapter = readFileSync(join(ROOT, 'shared/src/adapters/google/cloud-tasks-scheduler.ts'), 'utf8')
    const api = adapter.match(/export interface CloudTasksApi \{([^}]*)\}/)![1]!
    const methods = [...api.matchAll(/(\w+)\(request/g)].map((m) => m[1]!).sort()
    const permission: Record<string, string> = {
      createTask: 'cloudtasks.tasks.create',
      createQueue: 'cloudtasks.queues.create',
      updateQueue: 'cloudtasks.queues.update',
    }
    for (const m of methods) expect(permission[m], `no permission known for CloudTasksApi.${m}`).toBeDefined()
    const role = resource(tf, 'google_project_iam_custom_role', 'delivery_queues')
    expect([...(role.permissions as string[])].sort()).toEqual(methods.map((m) => permission[m]).sort())
  })

  it('every service that creates tasks gets the role and may act as the task identity, and no other service does', () => {
    expect(creators).toEqual(['portal-api', 'webhook-dispatcher'])
    const binding = resource(tf, 'google_project_iam_member', 'delivery_queues')
    expect(binding.role).toBe('${google_project_iam_custom_role.delivery_queues.name}')
    expect(binding.for_each).toBe('${toset(local.task_creators)}')
    const actAs = resource(tf, 'google_service_account_iam_member', 'task_creators_act_as_invoker')
    expect(actAs.role).toBe('roles/iam.serviceAccountUser')
    expect(actAs.service_account_id).toBe('${google_service_account.tasks_invoker.name}')
    expect(actAs.for_each).toBe('${toset(local.task_creators)}')
    expect([...(localExpr(tf, 'task_creators') as string[])].sort()).toEqual(creators)
  })

  it('no project-wide Cloud Tasks role, and Firestore access is conditioned on the one database', () => {
    const projectGrants = iamMembers().filter(([address]) => address.startsWith('google_project_iam_member.'))
    for (const [address, body] of projectGrants) {
      expect(String(body.role), address).not.toMatch(/^roles\/cloudtasks\./)
      if (body.role === 'roles/datastore.user') {
        const condition = (body.condition as Body[] | undefined)?.[0]
        expect(condition, `${address}: datastore.user without a condition`).toBeDefined()
        expect(String(condition!.expression)).toBe('resource.name == "projects/${var.project_id}/databases/${google_firestore_database.main.name}"')
      }
    }
    // the project-level roles that remain, each for a reason written next to it in infra/
    expect(projectGrants.map(([, b]) => String(b.role)).sort()).toEqual([
      '${google_project_iam_custom_role.delivery_queues.name}',
      // each service exports its spans (infra/service-accounts.tf trace_agent)
      'roles/cloudtrace.agent',
      'roles/datastore.user',
      'roles/logging.logWriter',
    ])
  })
})

describe('Pub/Sub publishers', () => {
  it('every writer of contacts may publish change rows: the worker, the dispatcher (visits) and portal-api (origin fallback upserts)', () => {
    // the change rows go out from the contact-write seam, so whoever upserts contacts publishes them
    const accept = readFileSync(join(ROOT, 'shared/src/domain/ingest/accept.ts'), 'utf8')
    expect(accept).toMatch(/export async function acceptPushOrUpsert[\s\S]*upsertBatchRecords/)
    const visits = readFileSync(join(ROOT, 'shared/src/domain/visits/resolve-person.ts'), 'utf8')
    expect(visits).toContain('deps.contacts.upsertBatch(')
    const fallbacks = readFileSync(join(ROOT, 'services/portal-api/src/routes/fallbacks.ts'), 'utf8')
    expect(fallbacks).toContain('acceptPushOrUpsert(')
    const publishers = Object.values(resource(tf, 'google_pubsub_topic_iam_member', 'publishers').for_each as Record<string, { topic: string; sa: string }>)
    const contactChanges = publishers
      .filter((p) => p.topic === 'contact-changes')
      .map((p) => p.sa)
      .sort()
    expect(contactChanges).toEqual(['portal-api', 'upsert-worker', 'webhook-dispatcher'])
  })
})

describe('the Cloud Build identity', () => {
  it('has exactly the roles the build uses: source read, image push, roll-out on the four services, actAs their accounts, logs', () => {
    const grants = iamMembers()
      .filter(([, body]) => references(tf, body.member).has('google_service_account.cloud_build'))
      .map(([address, body]) => {
        const target = [...references(tf, { ...body, member: undefined, depends_on: undefined })]
          .filter((r) => r !== 'google_service_account.cloud_build')
          .sort()
        return `${address.split('.')[0]} ${String(body.role)} ${target.join(',')} ${String(body.for_each ?? '')}`
      })
      .sort()
    expect(grants).toEqual([
      'google_artifact_registry_repository_iam_member roles/artifactregistry.writer google_artifact_registry_repository.images ',
      'google_cloud_run_v2_service_iam_member roles/run.developer google_cloud_run_v2_service.service ${toset(local.service_names)}',
      'google_project_iam_member roles/logging.logWriter  ',
      'google_service_account_iam_member roles/iam.serviceAccountUser google_service_account.service ${toset(local.service_names)}',
      'google_storage_bucket_iam_member roles/storage.objectViewer google_storage_bucket.build_source ',
    ])
  })

  it('is the account cloudbuild.yaml runs as, with logs in Cloud Logging, and the build uses each of those rights', () => {
    const submit = String(tf.output.cloud_build_submit?.[0]?.value)
    expect(submit).toContain('--service-account=${google_service_account.cloud_build.id}')
    expect(submit).toContain('--gcs-source-staging-dir=gs://${google_storage_bucket.build_source.name}/source')
    const cb = parse(readFileSync(join(CHECK_ROOT, 'cloudbuild.yaml'), 'utf8')) as { options: { logging: string }; steps: Array<{ args?: string[] }> }
    expect(cb.options.logging).toBe('CLOUD_LOGGING_ONLY')
    const args = cb.steps.map((s) => (s.args ?? []).join(' '))
    expect(args.filter((a) => a.startsWith('push ')).length).toBe(4) // artifactregistry.writer
    expect(args.filter((a) => a.startsWith('run services update ')).length).toBe(4) // run.developer + actAs
  })
})
