import type { PlatformDeps } from '../../ports/deps.ts'
import type { ContactWrittenListener } from '../../ports/contact-store.ts'
import { changeRowAttributes, toChangeRow } from './change-row.ts'

const CHANGE_ROWS_PER_SLICE = 500

/**
 * The change feed (docs/contact-object.md, "Change rows"): one `contact-changes` message per
 * written contact, whoever wrote it, the flat change row (change-row.ts) of the contact as stored,
 * changed at the write's event time; the BigQuery subscription writes it as one row.
 *
 * Failure contract: a failed publish rejects, which fails the write call, so its writer retries
 * (a batch or a visit event is redelivered) and the redelivery publishes the rows of the contacts
 * it finds already written (`reapplied`). A row may so be published twice; the table's
 * latest-row view reads one.
 */
export function changeFeed(deps: Pick<PlatformDeps, 'queue'>): ContactWrittenListener {
  return {
    name: 'change feed',
    async onContactWritten(written) {
      // in slices: the embedded queue commits a slice's publishes together (one commit, one WAL sync),
      // and 10,000 in one turn would hold the event loop (health checks, lease renewals) for one long
      // transaction; Pub/Sub batches each slice
      for (let i = 0; i < written.length; i += CHANGE_ROWS_PER_SLICE) {
        await Promise.all(
          written.slice(i, i + CHANGE_ROWS_PER_SLICE).map((w) => {
            const row = toChangeRow(w.contact, w.at)
            return deps.queue.publish('contact-changes', Buffer.from(JSON.stringify(row)), changeRowAttributes(row))
          }),
        )
        if (i + CHANGE_ROWS_PER_SLICE < written.length) await new Promise<void>((resolve) => setImmediate(resolve))
      }
    },
  }
}
