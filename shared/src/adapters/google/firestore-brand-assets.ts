import { createHash } from 'node:crypto'
import type { Firestore } from '@google-cloud/firestore'
import type { BrandAssets, LogoContentType, StoredLogo } from '../../ports/brand-assets.ts'

/**
 * Layout: `brand_assets/{accountId}/logos/{id}`, the bytes as a Firestore Bytes field (a Buffer),
 * at most the 64 KiB the upload allows (domain/tenants/logo.ts), well under a document's 1 MiB.
 * The path names the account, so another account's id is a missing document.
 */
/** an id is a SHA-256 in hex; anything else (a `/` would change the path) names no document */
const ID = /^[0-9a-f]{64}$/

export function createFirestoreBrandAssets(firestore: Firestore): BrandAssets {
  const logo = (accountId: string, id: string) => firestore.collection('brand_assets').doc(accountId).collection('logos').doc(id)
  return {
    async put(accountId, bytes, contentType) {
      const id = createHash('sha256').update(bytes).digest('hex')
      await logo(accountId, id).set({ content_type: contentType, bytes: Buffer.from(bytes) })
      return id
    },
    async get(accountId, id) {
      if (!ID.test(id)) return null
      const snap = await logo(accountId, id).get()
      if (!snap.exists) return null
      const data = snap.data() as { content_type: LogoContentType; bytes: Uint8Array }
      const stored: StoredLogo = { id, content_type: data.content_type, bytes: new Uint8Array(data.bytes) }
      return stored
    },
    async delete(accountId, id) {
      if (!ID.test(id)) return
      await logo(accountId, id).delete()
    },
    // the Firestore client belongs to whoever created it
    async close() {},
  }
}
