import { createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { CompactEncrypt, compactDecrypt } from 'jose'
import type { PortalSession } from './sessions.ts'
import type { PortalDeps } from './deps.ts'
import { hashPortalSecret, PORTAL_SECRET_PATTERN } from './secrets.ts'

/**
 * A secret shown once after a form (docs/portal.md, "Secrets are shown once"). The form's answer
 * is a redirect (303) to a reveal page; the page shows the secret and deletes it, so reloading
 * either page repeats nothing: the action is not sent again, and the secret is not shown again.
 *
 * The secret never travels in the URL (only a random id does) and is stored only sealed (a
 * compact JWE, `dir` + A256GCM, by jose) under a key derived from the session's cookie value, which is never stored: a
 * copy of the store alone does not reveal it, and only the browser that sent the form can open
 * it. It lives REVEAL_TTL_MS, long enough for the redirect to be followed.
 */
export const REVEAL_TTL_MS = 10 * 60 * 1000

/** What the reveal page shows: plain text, escaped where it is rendered. */
export interface RevealView {
  /** the page's title, e.g. "API key created" */
  title: string
  /** what the secret is, e.g. "New API key" */
  label: string
  secret: string
  /** a sentence after the label (how long the old one works, where it goes) */
  note: string
  /** where the tenant goes on from it (a portal path) and the link's words */
  back: { path: string; text: string }
  /**
   * What was shown, for the page that says it was shown once: a credential (a key, a token, a
   * signing secret: rotate it again; the default) or a tracked link (it cannot be rotated: make a
   * new one from the contact's page).
   */
  kind?: RevealKind
}

type RevealKind = 'secret' | 'tracked_link'

/**
 * What stays of a reveal once it was shown (no secret): what it was and where it led, so a reload
 * or the back button reads the advice that fits (docs/portal.md, "Secrets are shown once").
 */
export interface RevealReceipt {
  kind: RevealKind
  back: { path: string; text: string }
}

/** How long the receipt of a shown reveal is kept (the advice on a reload, a day later still). */
const REVEAL_RECEIPT_TTL_MS = 24 * 60 * 60 * 1000

/** The sealed contents of a record: a view not shown yet, or the receipt of one shown. */
type Sealed = RevealView | { receipt: RevealReceipt }
const isReceipt = (s: Sealed): s is { receipt: RevealReceipt } => 'receipt' in s

/** The id in the reveal page's URL: 128 random bits, base64url. */
const REVEAL_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/

/** The key of one reveal: HKDF-SHA256 of the session's cookie value, salted with the reveal's id. */
const keyOf = (cookieSecret: string, id: string, info: string): Uint8Array =>
  new Uint8Array(hkdfSync('sha256', Buffer.from(cookieSecret, 'utf8'), Buffer.from(id, 'utf8'), info, 32))

const JWE_KEY_INFO = 'portal reveal jwe'
/** direct key agreement and AES-256-GCM: the only algorithms a sealed reveal is opened with */
const JWE_HEADER = { alg: 'dir', enc: 'A256GCM' } as const

async function seal(cookieSecret: string, id: string, view: Sealed): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(view))).setProtectedHeader(JWE_HEADER).encrypt(keyOf(cookieSecret, id, JWE_KEY_INFO))
}

async function unseal(cookieSecret: string, id: string, sealed: string): Promise<Sealed | null> {
  if (sealed.startsWith('v1.')) return unsealV1(cookieSecret, id, sealed)
  try {
    const { plaintext } = await compactDecrypt(sealed, keyOf(cookieSecret, id, JWE_KEY_INFO), {
      keyManagementAlgorithms: [JWE_HEADER.alg],
      contentEncryptionAlgorithms: [JWE_HEADER.enc],
    })
    return JSON.parse(new TextDecoder().decode(plaintext)) as Sealed
  } catch {
    // another session's key, or a record altered in the store: nothing to show
    return null
  }
}

/**
 * Reveals sealed before the JWE form (`v1.<iv>.<body>.<tag>`, AES-256-GCM without additional
 * data, which a JWE cannot express) stay readable: one may still be waiting in the store, for up
 * to REVEAL_TTL_MS, across the deploy that brought the JWE form.
 */
function unsealV1(cookieSecret: string, id: string, sealed: string): RevealView | null {
  const [, iv, body, tag] = sealed.split('.')
  if (!iv || body === undefined || !tag) return null
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(cookieSecret, id, 'portal reveal v1'), Buffer.from(iv, 'base64url'))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    const text = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
    return JSON.parse(text) as RevealView
  } catch {
    return null
  }
}

/**
 * Keeps the view for one showing to this session and returns the id of its reveal page. The
 * caller passes the session's cookie value (the key's source) and the session it resolved to.
 */
export async function storeReveal(deps: PortalDeps, cookieSecret: string, session: PortalSession, view: RevealView): Promise<string> {
  if (!PORTAL_SECRET_PATTERN.test(cookieSecret) || hashPortalSecret(cookieSecret) !== session.session.hash) {
    throw new Error('storeReveal() with a cookie value that is not the session’s')
  }
  const id = randomBytes(16).toString('base64url')
  const now = deps.clock.now()
  await deps.portalAccess.putReveal({
    id,
    session_hash: session.session.hash,
    account_id: session.account.id,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + REVEAL_TTL_MS).toISOString(),
    sealed: await seal(cookieSecret, id, view),
  })
  return id
}

/** What opening a reveal gives: the view (the first time), or what stays of it, when anything does. */
export type RevealOpening = { view: RevealView; receipt?: undefined } | { view: null; receipt: RevealReceipt | null }

/**
 * The view of a reveal, once: it is deleted as it is read, and a receipt without the secret (what
 * it was, where it led) takes its place under the same id, for REVEAL_RECEIPT_TTL_MS. Opened
 * again, the receipt is given (and put back, so every later reload reads it too). Nothing when it
 * expired unseen, belongs to another session, or never existed — the page says the same for each.
 */
export async function openReveal(deps: PortalDeps, cookieSecret: string | null, session: PortalSession, id: string): Promise<RevealOpening> {
  const nothing = { view: null, receipt: null } as const
  if (cookieSecret === null || !REVEAL_ID_PATTERN.test(id)) return nothing
  const found = await deps.portalAccess.takeReveal(id, session.session.hash)
  if (!found || found.account_id !== session.account.id) return nothing
  const now = deps.clock.now()
  if (now >= Date.parse(found.expires_at)) return nothing
  const opened = await unseal(cookieSecret, id, found.sealed)
  if (opened === null) return nothing
  if (isReceipt(opened)) {
    await deps.portalAccess.putReveal(found)
    return { view: null, receipt: opened.receipt }
  }
  const receipt: RevealReceipt = { kind: opened.kind ?? 'secret', back: opened.back }
  await deps.portalAccess.putReveal({
    ...found,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + REVEAL_RECEIPT_TTL_MS).toISOString(),
    sealed: await seal(cookieSecret, id, { receipt }),
  })
  return { view: opened }
}

/**
 * The view of a reveal, once (openReveal without the receipt). Null when it was shown already,
 * has expired, belongs to another session, or never existed.
 */
export async function takeReveal(deps: PortalDeps, cookieSecret: string | null, session: PortalSession, id: string): Promise<RevealView | null> {
  return (await openReveal(deps, cookieSecret, session, id)).view
}
