import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError, type ValidationIssue } from '../../errors/app-error.ts'
import type { AccountRecord, ConnectionRecord, ConnectionType } from '../../model/records.ts'

/** What the provisioning functions use: the tenant store, the clock, and config + secrets for the key pepper. */
export type TenantDeps = Pick<PlatformDeps, 'tenants' | 'clock' | 'config' | 'secrets'>

export function nowIso(deps: Pick<PlatformDeps, 'clock'>): string {
  return new Date(deps.clock.now()).toISOString()
}

/** `now + seconds` as an ISO instant. */
export function isoAfter(deps: Pick<PlatformDeps, 'clock'>, seconds: number): string {
  return new Date(deps.clock.now() + seconds * 1000).toISOString()
}

export function issue(path: string, code: string, message: string): ValidationIssue {
  return { path, code, message }
}

/** 400 `invalid payload` with the given issues (same shape as a schema failure). */
export function invalidPayload(...issues: ValidationIssue[]): AppError {
  return new AppError('invalid_payload', { issues })
}

export async function requireAccount(deps: Pick<PlatformDeps, 'tenants'>, accountId: string): Promise<AccountRecord> {
  const account = await deps.tenants.getAccount(accountId)
  if (!account) throw new AppError('not_found')
  return account
}

/**
 * The connection `connectionId` of account `accountId`. A connection of another account is
 * answered exactly like a missing one (404), so ids of other tenants cannot be probed. A
 * connection of the account but of the wrong type for the operation is the caller's mistake
 * about what it addresses: 400 `invalid payload` with an issue naming the needed type.
 */
export async function requireConnection(
  deps: Pick<PlatformDeps, 'tenants'>,
  accountId: string,
  connectionId: string,
  type?: ConnectionType,
  operation?: string,
): Promise<ConnectionRecord> {
  const connection = await deps.tenants.getConnection(connectionId)
  if (!connection || connection.account_id !== accountId) throw new AppError('not_found')
  if (type !== undefined && connection.type !== type) {
    throw invalidPayload(
      issue('/', 'connection_type', `${operation ?? 'this operation'} requires a connection of type ${type} (this one is ${connection.type})`),
    )
  }
  return connection
}
