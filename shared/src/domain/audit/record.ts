import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { AuditEntry, AuditPage, AuditValue } from '../../ports/audit-log.ts'
import { isSecretFieldName, REDACTED, redactFieldValue } from '../../logging/redact.ts'

export type AuditDeps = Pick<PlatformDeps, 'auditLog' | 'clock'>

/** What a caller records; the id and time are added here. */
export interface NewAuditEntry {
  account_id: string
  /** `actorOf(session)` in the portal (services/portal-api/src/portal/session.ts) */
  actor: string
  action: string
  target: Record<string, string>
  details?: Record<string, AuditValue | AuditValue[]>
}

const redactValue = (v: AuditValue): AuditValue => (typeof v !== 'string' ? v : redactFieldValue(v))

/**
 * The values with anything that looks like a secret replaced by `[redacted]` (the one policy,
 * logging/redact.ts: every writer's entry passes here): the whole value under a secret's name,
 * the secret-looking part of any other. Entries never hold a secret, and
 * redaction never throws: what it sees is often a tenant's own text (a source name, a field
 * label, a domain), which may look like a credential by chance or on purpose, and refusing it
 * used to fail the request after its change was saved (issue 21 item 4).
 */
function redactSecrets<V extends AuditValue | AuditValue[]>(values: Record<string, V>): Record<string, V> {
  const out: Record<string, V> = {}
  for (const [name, v] of Object.entries(values)) {
    if (isSecretFieldName(name)) out[name] = (Array.isArray(v) ? v.map(() => REDACTED) : REDACTED) as V
    else out[name] = (Array.isArray(v) ? v.map(redactValue) : redactValue(v)) as V
  }
  return out
}

let lastMs = -1
let sequence = 0

/**
 * A new entry id: milliseconds (13 digits, so it sorts as time does), then 16 hex digits: a
 * sequence within the millisecond (4), so one instance's entries keep their order even when
 * several fall in one millisecond, and 48 random bits, so two instances never collide.
 */
export function auditEntryId(nowMs: number): string {
  if (nowMs === lastMs) sequence = (sequence + 1) & 0xffff
  else {
    lastMs = nowMs
    sequence = 0
  }
  return `${String(nowMs).padStart(13, '0')}-${sequence.toString(16).padStart(4, '0')}${randomBytes(6).toString('hex')}`
}

/** The entry as stored: an id and the time added, secrets redacted. Never throws. */
export function auditEntryOf(deps: Pick<AuditDeps, 'clock'>, entry: NewAuditEntry): AuditEntry {
  const now = deps.clock.now()
  return {
    id: auditEntryId(now),
    account_id: entry.account_id,
    at: new Date(now).toISOString(),
    actor: entry.actor,
    action: entry.action,
    target: redactSecrets(entry.target) as Record<string, string>,
    details: redactSecrets(entry.details ?? {}),
  }
}

/**
 * Writes one audit entry (who, what, when; never a secret) on its own: for what changes no tenant
 * record (a secret revealed, a test event sent, a link minted). A change of a tenant record is
 * recorded with withAuditedChange (audited-change.ts), in the change's own transaction.
 */
export async function recordAudit(deps: AuditDeps, entry: NewAuditEntry): Promise<AuditEntry> {
  const stored = auditEntryOf(deps, entry)
  await deps.auditLog.append(stored)
  return stored
}

/** An account's entries, newest first; `before` is the `next_before` of the previous page. */
export async function listAudit(deps: Pick<PlatformDeps, 'auditLog'>, accountId: string, options: { before?: string; limit: number }): Promise<AuditPage> {
  return deps.auditLog.list(accountId, options)
}
