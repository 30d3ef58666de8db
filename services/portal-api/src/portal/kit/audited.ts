import type { FastifyRequest } from 'fastify'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { withAuditedChange } from '@lsv/shared/domain/audit/audited-change.ts'
import { recordAudit, type NewAuditEntry } from '@lsv/shared/domain/audit/record.ts'
import { actorOf, sessionOf } from '../session.ts'

/** What a screen says about its change; the account and the actor come from the session. */
type EntryOf<T> = (written: T) => Omit<NewAuditEntry, 'account_id' | 'actor'>

/**
 * The audit of the portal's screens, written once: the account and actor are the request's
 * session (session.ts), the rest is the screen's.
 */
export function auditOf(deps: PlatformDeps, request: FastifyRequest) {
  const session = sessionOf(request)
  const stamp = (entry: Omit<NewAuditEntry, 'account_id' | 'actor'>): NewAuditEntry => ({
    account_id: session.account.id,
    actor: actorOf(session),
    ...entry,
  })
  return {
    /**
     * deps whose next tenant write commits the change together with its audit entry, built from
     * the record as written (domain/audit/audited-change.ts): a change is never saved without it
     */
    change: <T>(entry: EntryOf<T>): PlatformDeps => withAuditedChange(deps, (written: T) => stamp(entry(written))),
    /** an entry for what is not a tenant write (a secret shown, a test event queued) */
    record: (entry: Omit<NewAuditEntry, 'account_id' | 'actor'>) => recordAudit(deps, stamp(entry)),
  }
}
