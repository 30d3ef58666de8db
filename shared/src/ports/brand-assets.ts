import type { LogoRef } from '../model/records.ts'

/**
 * The tenant's portal logo (issue 22, job 9; docs/portal.md, "Branding"): the image bytes, kept
 * apart from the account record so that no account read (the edge's included) carries them. The
 * account's `portal_logo` holds only the reference (model/records.ts LogoRef).
 *
 * Images are addressed by account and content hash: a reference names exactly the bytes it was
 * written with, another account's hash is simply not found, and the serving URL changes with the
 * content (so it may be cached `immutable`). The bytes were checked before `put` (domain/tenants/
 * logo.ts); a store keeps whatever it is given.
 */

/** The image types a logo may have (sniffed from its bytes, never the client's word). */
export type LogoContentType = LogoRef['content_type']

export interface StoredLogo {
  /** lower-case hex SHA-256 of `bytes` */
  id: string
  content_type: LogoContentType
  bytes: Uint8Array
}

export interface BrandAssets {
  /**
   * Stores the image under the account and returns its id (the hex SHA-256 of the bytes). The
   * same bytes again are the same id (stored once). Other images of the account are kept until
   * `delete`d: the caller swaps the account's reference first, then deletes the old one.
   */
  put(accountId: string, bytes: Uint8Array, contentType: LogoContentType): Promise<string>
  /** The account's image with this id, or null (never another account's, whatever the id). */
  get(accountId: string, id: string): Promise<StoredLogo | null>
  /** Deletes the account's image with this id; a missing one is no error. */
  delete(accountId: string, id: string): Promise<void>
  close(): Promise<void>
}
