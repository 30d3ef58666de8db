import type { DeliveryLog } from '../ports/delivery-log.ts'
import type { PushLog, PushLogEntry, PushOutcome } from '../ports/push-log.ts'
import type { DeliveryAttempt, DeliveryRecord } from '../model/records.ts'
import { redactHeaderValue, redactText } from '../logging/redact.ts'

/**
 * The debuggers' write seam for the redaction policy (logging/redact.ts): the composition root
 * (platform/deps.ts) wraps whichever push log and delivery log it built, so every writer's entry
 * passes the policy before any store keeps it, and the portal pages that read them back show
 * nothing in clear. Only text a caller or a receiver chose is rewritten; ids, counts, times and
 * a delivery's body (the exact bytes delivered, kept for replay and signature checks) are not.
 */

const nullable = (s: string | null): string | null => (s === null ? s : redactText(s))

function redactedPushEntry(e: PushLogEntry): PushLogEntry {
  return {
    ...e,
    error: nullable(e.error),
    keys: e.keys.map(redactText),
    request_id: redactText(e.request_id),
    credential: { ...e.credential, label: nullable(e.credential.label) },
  }
}

/** a refused value is what the caller sent: it may be a credential pasted into the wrong field */
function redactedOutcome(o: PushOutcome): PushOutcome {
  return { ...o, refused: o.refused.map((r) => ({ ...r, external_id: nullable(r.external_id), value: nullable(r.value), reason: redactText(r.reason) })) }
}

function redactedAttempt(a: DeliveryAttempt): DeliveryAttempt {
  const headers = a.response_headers
  return {
    ...a,
    error: nullable(a.error),
    response_excerpt: nullable(a.response_excerpt),
    ...(headers ? { response_headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, redactHeaderValue(k, v)])) } : {}),
  }
}

export function redactingPushLog(store: PushLog): PushLog {
  return {
    append: (entries, keep, nowMs) => store.append(entries.map(redactedPushEntry), keep, nowMs),
    recordOutcome: (connectionId, requestId, outcome, expireAtMs) => store.recordOutcome(connectionId, requestId, redactedOutcome(outcome), expireAtMs),
    recent: (connectionId, limit, nowMs) => store.recent(connectionId, limit, nowMs),
    close: () => store.close(),
  }
}

export function redactingDeliveryLog(store: DeliveryLog): DeliveryLog {
  return {
    put: (delivery: DeliveryRecord) => store.put({ ...delivery, attempts: delivery.attempts.map(redactedAttempt) }),
    get: (id) => store.get(id),
    list: (integrationId, options) => store.list(integrationId, options),
    countByStatus: (integrationId, options) => store.countByStatus(integrationId, options),
    listDue: (before, limit) => store.listDue(before, limit),
    deleteAccountData: (accountId) => store.deleteAccountData(accountId),
    close: () => store.close(),
  }
}
