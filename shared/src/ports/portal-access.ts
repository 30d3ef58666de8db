/**
 * Portal access (management-api.md, "Portal access"): single-use sign-in links and the sessions
 * they start. Neither secret is stored: a link is kept under the hash of its token, a session
 * under the hash of its cookie value. Times are ISO-8601 instants in UTC, chosen by the caller
 * (the domain's clock), never read from the adapter's own clock.
 */

/** A sign-in link, minted by the operator for one account. */
export interface PortalLinkRecord {
  /** SHA-256 (hex) of the link's token */
  token_hash: string
  account_id: string
  created_at: string
  /** the link works strictly before this instant; the store may drop the record from then on */
  expires_at: string
  /** when it was followed (it works once); null while unused */
  used_at: string | null
}

/** A portal session of one account. */
export interface PortalSessionRecord {
  /** SHA-256 (hex) of the cookie value */
  hash: string
  account_id: string
  created_at: string
  /** the last request that used it (written at most about once a minute: domain/portal/sessions.ts) */
  last_used_at: string
  /** its absolute end, fixed when it starts; the store may drop the record from then on */
  expires_at: string
}

/** The session a redeemed link starts. */
export interface NewPortalSession {
  hash: string
  /** the instant of the redemption: must be before the link's expires_at */
  at: string
  /** the session's absolute end */
  expires_at: string
}

/**
 * A secret to show once (a new API key, token or signing secret) after a form's redirect
 * (domain/portal/reveals.ts): kept for minutes, readable once, by the session that made it.
 */
export interface PortalRevealRecord {
  /** the random id in the reveal page's URL */
  id: string
  /** SHA-256 (hex) of the session's cookie value: only that session may take it */
  session_hash: string
  account_id: string
  created_at: string
  /** it is no longer shown from this instant; the store may drop the record from then on */
  expires_at: string
  /** what the page shows, sealed with a key derived from the session's cookie value (never stored) */
  sealed: string
}

export interface PortalAccessStore {
  createLink(link: PortalLinkRecord): Promise<void>
  getLink(tokenHash: string): Promise<PortalLinkRecord | null>
  /**
   * Follows a link, atomically: when the link exists, was not used before and `session.at` is
   * before its `expires_at`, marks it used at `session.at` and stores a session of the link's
   * account (created and last used at `session.at`, ending at `session.expires_at`), and returns
   * that session. Otherwise writes
   * nothing and returns null. Of any number of concurrent calls for one link (in any process
   * sharing the store), at most one returns a session.
   */
  redeemLink(tokenHash: string, session: NewPortalSession): Promise<PortalSessionRecord | null>

  getSession(hash: string): Promise<PortalSessionRecord | null>
  /** sets `last_used_at`; nothing happens when the session is gone */
  touchSession(hash: string, at: string): Promise<void>
  /** ends one session (sign-out, or found past its lifetime); nothing happens when it is gone */
  deleteSession(hash: string): Promise<void>
  /**
   * Ends every session of the account (with their reveals) and voids its unused links: afterwards no session of the
   * account started before the call resolves, and no link minted before it can start one (a
   * redemption racing with the call either finished first, and its session is ended too, or
   * fails).
   */
  endAccountSessions(accountId: string): Promise<void>

  putReveal(reveal: PortalRevealRecord): Promise<void>
  /**
   * Reads and deletes a reveal, atomically, when it exists and belongs to the session
   * `sessionHash`; otherwise writes nothing and returns null (another session cannot use it up).
   * Of any number of concurrent calls for one reveal, at most one returns it.
   */
  takeReveal(id: string, sessionHash: string): Promise<PortalRevealRecord | null>

  /** removes every link, session and reveal of the account (tests) */
  deleteAccountData(accountId: string): Promise<void>
  close(): Promise<void>
}
