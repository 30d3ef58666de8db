import type { LinkTokenRecord } from '../model/records.ts'

/** The opaque tracked-link tokens minted by POST /api/contacts/links, by the hash of the token. */
export interface LinkTokenStore {
  put(record: LinkTokenRecord): Promise<void>
  get(hash: string): Promise<LinkTokenRecord | null>
  /** removes every link token of the account (tests, account deletion) */
  deleteAccountData(accountId: string): Promise<void>
  close(): Promise<void>
}
