import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { AuditEntry, AuditPage, AuditValue } from '../../ports/audit-log.ts'

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

/**
 * Names that would hold a secret (a key, a token, a signing secret, a URL with a token in it).
 * An entry carrying one is a programming error: refused before it reaches the store, so a
 * secret can never be written to the log by mistake. `*_id` names are ids and allowed.
 */
const SECRET_NAME = /(^|_)(key|token|secret|password|url|cookie)s?$/i

/**
 * Values holding one of this system's secrets anywhere in them: API keys (`lsk_…`), source and
 * location tokens (`lst_…`), signing secrets (`whsec_…`), portal secrets (43 base64url
 * characters). A key's 12-character display prefix (`lsk_` + 8) is not a secret and passes.
 */
const SECRET_VALUE = /(lsk|lst|whsec)_[A-Za-z0-9_+/=-]{16,}|^[A-Za-z0-9_-]{43}$/

function refuseSecrets(where: string, values: Record<string, AuditValue | AuditValue[]>): void {
  for (const [name, v] of Object.entries(values)) {
    if (SECRET_NAME.test(name)) throw new Error(`audit ${where}.${name}: a secret's name; audit entries never hold secrets`)
    for (const one of Array.isArray(v) ? v : [v]) {
      if (typeof one === 'string' && SECRET_VALUE.test(one)) throw new Error(`audit ${where}.${name}: looks like a secret; audit entries never hold secrets`)
    }
  }
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

/**
 * Writes one audit entry (who, what, when; never a secret). Every change the portal makes calls
 * this after the change succeeded.
 */
export async function recordAudit(deps: AuditDeps, entry: NewAuditEntry): Promise<AuditEntry> {
  const details = entry.details ?? {}
  refuseSecrets('target', entry.target)
  refuseSecrets('details', details)
  const now = deps.clock.now()
  const stored: AuditEntry = {
    id: auditEntryId(now),
    account_id: entry.account_id,
    at: new Date(now).toISOString(),
    actor: entry.actor,
    action: entry.action,
    target: { ...entry.target },
    details: { ...details },
  }
  await deps.auditLog.append(stored)
  return stored
}

/** An account's entries, newest first; `before` is the `next_before` of the previous page. */
export async function listAudit(deps: Pick<PlatformDeps, 'auditLog'>, accountId: string, options: { before?: string; limit: number }): Promise<AuditPage> {
  return deps.auditLog.list(accountId, options)
}
