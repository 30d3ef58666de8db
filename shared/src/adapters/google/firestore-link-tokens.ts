import type { Firestore } from '@google-cloud/firestore'
import type { LinkTokenRecord } from '../../model/records.ts'
import type { LinkTokenStore } from '../../ports/link-tokens.ts'

/** `link_tokens/{hash}` holds the LinkTokenRecord (top level: a token is looked up by hash alone). */
export function createFirestoreLinkTokens(firestore: Firestore): LinkTokenStore {
  const linkTokens = firestore.collection('link_tokens')
  return {
    async put(record: LinkTokenRecord) {
      await linkTokens.doc(record.hash).set(record)
    },
    async get(hash) {
      const snap = await linkTokens.doc(hash).get()
      return snap.exists ? (snap.data() as LinkTokenRecord) : null
    },
    async deleteAccountData(accountId) {
      // find the account's by equality (single-field index)
      const tokens = await linkTokens.where('account_id', '==', accountId).select().get()
      if (tokens.empty) return
      const writer = firestore.bulkWriter()
      for (const doc of tokens.docs) writer.delete(doc.ref).catch(() => {})
      await writer.close()
    },
    // the Firestore client belongs to whoever created it (PlatformDeps terminates it)
    async close() {},
  }
}
