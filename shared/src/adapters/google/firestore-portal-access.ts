import { Timestamp } from '@google-cloud/firestore'
import type { DocumentData, DocumentReference, Firestore, Query } from '@google-cloud/firestore'
import type { NewPortalSession, PortalAccessStore, PortalLinkRecord, PortalRevealRecord, PortalSessionRecord } from '../../ports/portal-access.ts'
import { isConflict, NOT_FOUND } from './grpc-codes.ts'

/**
 * Layout (top-level collections, document id = the stored hash):
 *   portal_links/{token_hash}      the link record + `expire_at` (= expires_at, TTL policy)
 *   portal_sessions/{hash}         the session record + `expire_at` (= its absolute end, TTL policy)
 *   portal_reveals/{id}            a secret shown once, sealed + `expire_at` (= expires_at, TTL policy)
 * TTL fields are listed in ../firestore-indexes.ts (Terraform declares them); queries are on
 * `account_id` alone (single-field index, automatic).
 *
 * Single use without a lock: a redemption reads the link, then commits one batch that updates it
 * on the precondition that it is unchanged since that read (`lastUpdateTime`) and creates the
 * session. A concurrent redemption (or the link's deletion by endAccountSessions) changes the
 * link first, so the batch fails as a whole and no session is written; the loser does not retry,
 * since whatever changed the link made it unusable. (Not `runTransaction`: it would serialize the
 * two on a lock and retry the loser after a backoff, only to find the link used.)
 */
/** a WriteBatch holds at most 500 writes */
const BATCH_LIMIT = 500

function withoutTtl<T>(data: DocumentData): T {
  const { expire_at: _expireAt, ...record } = data
  return record as T
}

export function createFirestorePortalAccessStore(firestore: Firestore): PortalAccessStore {
  const links = firestore.collection('portal_links')
  const sessions = firestore.collection('portal_sessions')
  const reveals = firestore.collection('portal_reveals')

  const deleteAll = async (refs: DocumentReference[]): Promise<void> => {
    for (let i = 0; i < refs.length; i += BATCH_LIMIT) {
      const batch = firestore.batch()
      for (const ref of refs.slice(i, i + BATCH_LIMIT)) batch.delete(ref)
      await batch.commit()
    }
  }
  const refsOf = async (query: Query, keep: (data: DocumentData) => boolean = () => true): Promise<DocumentReference[]> =>
    (await query.get()).docs.filter((d) => keep(d.data())).map((d) => d.ref)

  return {
    async createLink(link: PortalLinkRecord) {
      await links.doc(link.token_hash).create({ ...link, expire_at: Timestamp.fromMillis(Date.parse(link.expires_at)) })
    },

    async getLink(tokenHash) {
      const snap = await links.doc(tokenHash).get()
      return snap.exists ? withoutTtl<PortalLinkRecord>(snap.data()!) : null
    },

    async redeemLink(tokenHash: string, session: NewPortalSession): Promise<PortalSessionRecord | null> {
      const ref = links.doc(tokenHash)
      const snap = await ref.get()
      if (!snap.exists) return null
      const link = withoutTtl<PortalLinkRecord>(snap.data()!)
      if (link.used_at !== null || Date.parse(session.at) >= Date.parse(link.expires_at)) return null
      const record: PortalSessionRecord = {
        hash: session.hash,
        account_id: link.account_id,
        created_at: session.at,
        last_used_at: session.at,
        expires_at: session.expires_at,
      }
      const batch = firestore.batch()
      batch.update(ref, { used_at: session.at }, { lastUpdateTime: snap.updateTime! })
      batch.create(sessions.doc(session.hash), { ...record, expire_at: Timestamp.fromMillis(Date.parse(record.expires_at)) })
      try {
        await batch.commit()
        return record
      } catch (err) {
        if (isConflict(err)) return null
        throw err
      }
    },

    async getSession(hash) {
      const snap = await sessions.doc(hash).get()
      return snap.exists ? withoutTtl<PortalSessionRecord>(snap.data()!) : null
    },

    async touchSession(hash, at) {
      try {
        await sessions.doc(hash).update({ last_used_at: at })
      } catch (err) {
        // ended meanwhile (sign-out, operator): nothing to touch
        if ((err as { code?: unknown }).code !== NOT_FOUND) throw err
      }
    },

    async deleteSession(hash) {
      await sessions.doc(hash).delete()
    },

    async putReveal(reveal: PortalRevealRecord) {
      await reveals.doc(reveal.id).create({ ...reveal, expire_at: Timestamp.fromMillis(Date.parse(reveal.expires_at)) })
    },

    async takeReveal(id, sessionHash) {
      // as redeemLink: the delete holds only if the document is unchanged since this read, so of
      // two takers one deletes it and the other's precondition fails (or it finds nothing)
      const ref = reveals.doc(id)
      const snap = await ref.get()
      if (!snap.exists) return null
      const reveal = withoutTtl<PortalRevealRecord>(snap.data()!)
      if (reveal.session_hash !== sessionHash) return null
      try {
        await ref.delete({ lastUpdateTime: snap.updateTime! })
        return reveal
      } catch (err) {
        if (isConflict(err)) return null
        throw err
      }
    },

    async endAccountSessions(accountId) {
      // links first, sessions after: a redemption that committed before its link was deleted has
      // its session visible to the second query; one that had not fails on its precondition
      await deleteAll(await refsOf(links.where('account_id', '==', accountId), (d) => d.used_at === null))
      await deleteAll(await refsOf(sessions.where('account_id', '==', accountId)))
      await deleteAll(await refsOf(reveals.where('account_id', '==', accountId)))
    },

    async deleteAccountData(accountId) {
      await deleteAll(await refsOf(links.where('account_id', '==', accountId)))
      await deleteAll(await refsOf(sessions.where('account_id', '==', accountId)))
      await deleteAll(await refsOf(reveals.where('account_id', '==', accountId)))
    },

    // the Firestore client belongs to whoever created it
    async close() {},
  }
}
