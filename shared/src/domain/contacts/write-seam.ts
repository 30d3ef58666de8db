import type { ContactRecord, ContactUpsertInput, WriterClass } from '../../model/records.ts'
import type { ContactStore, ContactWriter, ContactWritten, ContactWrittenListener, MergeFn, UpsertOutcome } from '../../ports/contact-store.ts'

/**
 * The one seam every contact write crosses: the composition root (platform/deps.ts) hands every
 * service this wrapper of the contact store, so a push, a visit's resolution, an enrichment or
 * a form write all get the same reactions (the change feed, platform/listeners.ts) without any
 * writer calling them. Each changed contact becomes one ContactWritten, the contact as stored
 * (what the merge returned, which is what the store wrote).
 */

const WRITER_OF: Record<WriterClass, ContactWriter> = { manual: 'push', provider: 'visit', enrichment: 'enrichment', form: 'form' }

/** reads in flight when a redelivery looks for contacts an earlier attempt already wrote */
const RECHECK_READS_IN_FLIGHT = 200

/** The store committed the writes, but a reaction to them failed: the writer retries (its outcomes are kept). */
export class ContactReactionFailed extends Error {
  readonly outcomes: UpsertOutcome[]
  constructor(outcomes: UpsertOutcome[], cause: unknown) {
    super('a reaction to a contact write failed', { cause })
    this.name = 'ContactReactionFailed'
    this.outcomes = outcomes
  }
}

/** Whether a stored contact holds a write with one of these origins (see merge.ts versions). */
function carriesOrigin(record: ContactRecord, origins: ReadonlySet<string>): boolean {
  for (const v of Object.values(record.versions ?? {})) {
    if (origins.has(v.slice(v.lastIndexOf('|') + 1))) return true
  }
  return false
}

export function withContactWrites(store: ContactStore, listeners: () => readonly ContactWrittenListener[]): ContactStore {
  return {
    get: (accountId, contactId) => store.get(accountId, contactId),
    getByAnchor: (accountId, source, externalId) => store.getByAnchor(accountId, source, externalId),
    findByNetworkUrl: (accountId, networkUrl) => store.findByNetworkUrl(accountId, networkUrl),
    findByBusinessEmail: (accountId, email) => store.findByBusinessEmail(accountId, email),
    list: (accountId, options) => store.list(accountId, options),
    // removes an account's contacts wholesale (tests, account deletion): no change rows, the
    // analysts' table keeps the account's history
    deleteAccountData: (accountId) => store.deleteAccountData(accountId),
    close: () => store.close(),
    async upsertBatch(accountId, inputs, merge, options = {}) {
      // the record each document ends up as: the last non-null merge of its group wins (a retried
      // transaction merges again, and its last merge is the one committed)
      const stored = new Map<string, { record: ContactRecord; input: ContactUpsertInput }>()
      const capture: MergeFn = (existing, input, account) => {
        const next = merge(existing, input, account)
        if (next) stored.set(next.id, { record: next, input })
        return next
      }
      const outcomes = await store.upsertBatch(accountId, inputs, capture, options.onProgress ? { onProgress: options.onProgress } : {})
      const written = new Map<string, ContactWritten>()
      const unchanged = new Map<string, { origins: Set<string>; input: ContactUpsertInput }>()
      outcomes.forEach((o, i) => {
        const s = stored.get(o.contactId)
        if ((o.result === 'created' || o.result === 'updated') && s) {
          const change = written.get(o.contactId)?.change === 'created' || o.result === 'created' ? 'created' : 'updated'
          written.set(o.contactId, { accountId, contact: s.record, change, by: WRITER_OF[s.input.writer], at: s.input.at })
        } else if (o.result === 'unchanged' && options.recheckApplied) {
          const u = unchanged.get(o.contactId) ?? { origins: new Set<string>(), input: inputs[i]! }
          u.origins.add(inputs[i]!.origin)
          u.input = inputs[i]!
          unchanged.set(o.contactId, u)
        }
      })
      const recheck = [...unchanged].filter(([id]) => !written.has(id))
      for (let i = 0; i < recheck.length; i += RECHECK_READS_IN_FLIGHT) {
        const slice = recheck.slice(i, i + RECHECK_READS_IN_FLIGHT)
        const records = await Promise.all(slice.map(([id]) => store.get(accountId, id)))
        records.forEach((r, k) => {
          const { origins, input } = slice[k]![1]
          if (r && carriesOrigin(r, origins)) written.set(r.id, { accountId, contact: r, change: 'reapplied', by: WRITER_OF[input.writer], at: input.at })
        })
      }
      for (const o of outcomes) {
        const w = written.get(o.contactId)
        if (w) o.written = w
      }
      if (written.size > 0) {
        const all = [...written.values()]
        try {
          for (const listener of listeners()) await listener.onContactWritten(all)
        } catch (cause) {
          throw new ContactReactionFailed(outcomes, cause)
        }
      }
      return outcomes
    },
  }
}
