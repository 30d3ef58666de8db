import type { AccountRecord } from '../../model/records.ts'
import { invalidPayload, issue } from './common.ts'

/**
 * The origins that may frame an account's portal (issue 22, job 9; docs/portal.md, "Embedding").
 * The schema's pattern (FRAME_ANCESTOR_PATTERN in contract/admin.ts) already admits only `https://host[:port]`; this
 * re-reads each one through `URL` so that what is stored is exactly the origin a browser compares
 * against `frame-ancestors`: a default port (`:443`) or an out-of-range one is refused rather
 * than silently rewritten, since the operator should see the list they sent.
 */
export function checkedFrameAncestors(origins: readonly string[]): string[] {
  origins.forEach((origin, i) => {
    const parsed = URL.parse(origin)
    if (parsed === null || parsed.protocol !== 'https:' || parsed.origin !== origin) {
      throw invalidPayload(
        issue(`/portal_frame_ancestors/${i}`, 'origin', 'must be an https origin: https://host or https://host:port (not 443), lower-case, nothing after it'),
      )
    }
  })
  return [...origins]
}

/** The account's allow-list; records written before the setting existed have none. */
export function frameAncestorsOf(account: Pick<AccountRecord, 'portal_frame_ancestors'>): readonly string[] {
  return account.portal_frame_ancestors ?? []
}
