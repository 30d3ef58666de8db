/**
 * The IAM check of the local stand-ins: each service calls Cloud Tasks and Secret Manager on its
 * own port, so the stand-in knows the caller's service account and allows a call only when the
 * grants Terraform declares (read from infra/) give that account the permission Google would
 * require. A grant missing in Terraform fails here as PERMISSION_DENIED, as it would in Google
 * Cloud, instead of surfacing only after a deploy.
 *
 * The same grants decide who may call a Cloud Run service: Cloud Run lets a request reach the
 * container only when the identity of its ID token (or anyone, for `allUsers`) holds
 * run.routes.invoke on the service (google_cloud_run_v2_service_iam_member), and answers 403
 * otherwise. The push relay and the Cloud Tasks stand-in check that before they deliver.
 *
 * Predefined roles are listed with the permissions start:cloud's stand-ins check (Google's IAM
 * roles reference); a custom role (google_project_iam_custom_role) brings its own list.
 */
import type { Grant } from './deployed-shape.ts'

const PREDEFINED: Record<string, string[]> = {
  'roles/owner': ['*'],
  'roles/editor': ['*'],
  'roles/secretmanager.admin': ['secretmanager.*'],
  'roles/secretmanager.secretAccessor': ['secretmanager.versions.access'],
  'roles/secretmanager.secretVersionAdder': ['secretmanager.versions.add'],
  'roles/secretmanager.secretVersionManager': [
    'secretmanager.versions.add',
    'secretmanager.versions.destroy',
    'secretmanager.versions.disable',
    'secretmanager.versions.enable',
    'secretmanager.versions.get',
    'secretmanager.versions.list',
  ],
  'roles/secretmanager.viewer': [
    'secretmanager.secrets.get',
    'secretmanager.secrets.list',
    'secretmanager.versions.get',
    'secretmanager.versions.list',
    'secretmanager.locations.*',
  ],
  'roles/cloudtasks.admin': ['cloudtasks.*'],
  'roles/cloudtasks.queueAdmin': ['cloudtasks.queues.*', 'cloudtasks.locations.*'],
  'roles/cloudtasks.enqueuer': ['cloudtasks.tasks.create'],
  'roles/cloudtasks.taskDeleter': ['cloudtasks.tasks.delete'],
  'roles/cloudtasks.taskRunner': ['cloudtasks.tasks.run'],
  'roles/cloudtasks.viewer': ['cloudtasks.locations.*', 'cloudtasks.queues.get', 'cloudtasks.queues.list', 'cloudtasks.tasks.get', 'cloudtasks.tasks.list'],
  'roles/iam.serviceAccountUser': ['iam.serviceAccounts.actAs', 'iam.serviceAccounts.get', 'iam.serviceAccounts.list'],
  'roles/run.invoker': ['run.routes.invoke'],
  'roles/run.admin': ['run.*'],
}

function matches(pattern: string, permission: string): boolean {
  if (pattern === '*') return true
  if (pattern.endsWith('.*')) return permission.startsWith(pattern.slice(0, -1))
  return pattern === permission
}

export interface Iam {
  /**
   * does `account` hold `permission` on `resource` (or on the project)? `null` is a caller
   * without identity, which only grants to `allUsers` cover.
   */
  allows(account: string | null, permission: string, resource: string): boolean
}

export function createIam(grants: Grant[], customRoles: Record<string, string[]> = {}): Iam {
  const permissionsOf = (role: string) => customRoles[role] ?? PREDEFINED[role] ?? []
  return {
    allows(account, permission, resource) {
      const members = new Set(['allUsers', ...(account === null ? [] : ['allAuthenticatedUsers', `serviceAccount:${account}`])])
      return grants.some(
        (g) => members.has(g.member) && (g.resource === 'project' || g.resource === resource) && permissionsOf(g.role).some((p) => matches(p, permission)),
      )
    },
  }
}

/** The IAM resource of a Cloud Run service in the grants (deployed-shape.ts). */
export const cloudRunResource = (service: string) => `run:${service}`

/**
 * Cloud Run's check in front of a service: null when `identity` (the email in the request's ID
 * token, null without one) may invoke `service`, else why Cloud Run answers 403.
 */
export function invokerRefusal(iam: Iam, identity: string | null, service: string): string | null {
  if (iam.allows(identity, 'run.routes.invoke', cloudRunResource(service))) return null
  return `403 from Cloud Run: ${identity ?? 'a caller without an ID token'} has no run.routes.invoke on service ${service} (infra/ grants no roles/run.invoker for it: google_cloud_run_v2_service_iam_member)`
}
