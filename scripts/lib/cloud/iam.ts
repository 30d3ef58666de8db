/**
 * The IAM check of the local stand-ins: each service calls Cloud Tasks and Secret Manager on its
 * own port, so the stand-in knows the caller's service account and allows a call only when the
 * grants Terraform declares (read from infra/) give that account the permission Google would
 * require. A grant missing in Terraform fails here as PERMISSION_DENIED, as it would in Google
 * Cloud, instead of surfacing only after a deploy.
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
    'secretmanager.versions.add', 'secretmanager.versions.destroy', 'secretmanager.versions.disable',
    'secretmanager.versions.enable', 'secretmanager.versions.get', 'secretmanager.versions.list',
  ],
  'roles/secretmanager.viewer': ['secretmanager.secrets.get', 'secretmanager.secrets.list', 'secretmanager.versions.get', 'secretmanager.versions.list', 'secretmanager.locations.*'],
  'roles/cloudtasks.admin': ['cloudtasks.*'],
  'roles/cloudtasks.queueAdmin': ['cloudtasks.queues.*', 'cloudtasks.locations.*'],
  'roles/cloudtasks.enqueuer': ['cloudtasks.tasks.create'],
  'roles/cloudtasks.taskDeleter': ['cloudtasks.tasks.delete'],
  'roles/cloudtasks.taskRunner': ['cloudtasks.tasks.run'],
  'roles/cloudtasks.viewer': ['cloudtasks.locations.*', 'cloudtasks.queues.get', 'cloudtasks.queues.list', 'cloudtasks.tasks.get', 'cloudtasks.tasks.list'],
  'roles/iam.serviceAccountUser': ['iam.serviceAccounts.actAs', 'iam.serviceAccounts.get', 'iam.serviceAccounts.list'],
}

function matches(pattern: string, permission: string): boolean {
  if (pattern === '*') return true
  if (pattern.endsWith('.*')) return permission.startsWith(pattern.slice(0, -1))
  return pattern === permission
}

export interface Iam {
  /** does `account` hold `permission` on `resource` (or on the project)? */
  allows(account: string, permission: string, resource: string): boolean
}

export function createIam(grants: Grant[], customRoles: Record<string, string[]> = {}): Iam {
  const permissionsOf = (role: string) => customRoles[role] ?? PREDEFINED[role] ?? []
  return {
    allows(account, permission, resource) {
      const member = `serviceAccount:${account}`
      return grants.some((g) =>
        g.member === member
        && (g.resource === 'project' || g.resource === resource)
        && permissionsOf(g.role).some((p) => matches(p, permission)))
    },
  }
}
