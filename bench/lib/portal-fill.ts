import { randomBytes } from 'node:crypto'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { ContactUpsertInput, DeliveryRecord } from '@lsv/shared/model/records.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { auditEntryOf } from '@lsv/shared/domain/audit/record.ts'

const BATCH = 500
const HOUR_MS = 3_600_000

/** `count` contacts straight through the contact store's upsertBatch (no HTTP): anchors crm/c-<i>, emails p<i>@example.com. */
export async function fillContacts(deps: PlatformDeps, accountId: string, count: number): Promise<void> {
  const at = new Date().toISOString()
  for (let from = 0; from < count; from += BATCH) {
    const inputs: ContactUpsertInput[] = []
    for (let i = from; i < Math.min(count, from + BATCH); i++) {
      inputs.push({
        source: 'crm',
        external_id: `c-${i}`,
        writer: 'form',
        at,
        origin: `bench:${i}`,
        patch: { identity: { first_name: `First${i}`, last_name: `Last${i}` }, business_email: `p${i}@example.com` },
      })
    }
    await deps.contacts.upsertBatch(accountId, inputs, mergeContact)
  }
}

/**
 * `count` deliveries straight through the DeliveryLog port's put, spread round-robin over the
 * integrations and evenly over the last 48 hours (so a 24-hour health view has data), one in 20
 * failed after three attempts, the rest delivered at the first. Puts of a batch are issued
 * together so the embedded log's group commit shares their commits. Returns the id of a delivery
 * in the middle of the first integration's log (a deep page's cursor).
 */
export async function fillDeliveries(deps: PlatformDeps, accountId: string, integrationIds: string[], count: number): Promise<string> {
  const nowMs = deps.clock.now()
  const step = (48 * HOUR_MS) / Math.max(1, count)
  let middle = ''
  for (let from = 0; from < count; from += BATCH) {
    const puts: Promise<void>[] = []
    for (let i = from; i < Math.min(count, from + BATCH); i++) {
      const createdMs = nowMs - 48 * HOUR_MS + i * step
      const created = new Date(createdMs).toISOString()
      const failed = i % 20 === 7
      const eventId = `visit_bench_${i}`
      const attempts = Array.from({ length: failed ? 3 : 1 }, (_, a) => ({
        attempt: a + 1,
        at: new Date(createdMs + a * 60_000).toISOString(),
        status_code: failed ? 503 : 200,
        error: failed ? 'HTTP 503' : null,
        latency_ms: 40 + (i % 200),
        response_excerpt: failed ? 'upstream unavailable' : 'ok',
      }))
      const d: DeliveryRecord = {
        id: `dlv_${randomBytes(16).toString('hex')}`,
        account_id: accountId,
        integration_id: integrationIds[i % integrationIds.length]!,
        event_id: eventId,
        status: failed ? 'failed' : 'succeeded',
        attempts,
        body: JSON.stringify({
          id: eventId,
          type: 'visit.identified',
          created_at: created,
          data: { contact_id: `c-${i}`, url: `https://shop.example/p/${i}` },
        }),
        next_attempt_at: null,
        created_at: created,
        updated_at: attempts[attempts.length - 1]!.at,
      }
      if (i === Math.floor(count / 2) - (Math.floor(count / 2) % integrationIds.length)) middle = d.id
      puts.push(deps.deliveries.put(d))
    }
    await Promise.all(puts)
  }
  return middle
}

/**
 * `count` audit entries through the audit log port (as the domain makes them: ids time-ordered,
 * secrets redacted). Returns the id of the one in the middle (a deep page's cursor).
 */
export async function fillAudit(deps: PlatformDeps, accountId: string, count: number): Promise<string> {
  let middle = ''
  const actions = ['api_key.create', 'api_key.revoke', 'connection.update', 'integration.update', 'link.minted']
  for (let i = 0; i < count; i++) {
    const entry = auditEntryOf(deps, {
      account_id: accountId,
      actor: 'portal session 0123456789ab',
      action: actions[i % actions.length]!,
      target: { connection_id: `con_bench_${i % 7}` },
      details: { n: i },
    })
    if (i === Math.floor(count / 2)) middle = entry.id
    await deps.auditLog.append(entry)
  }
  return middle
}
