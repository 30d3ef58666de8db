import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { html, type SafeHtml } from './html.ts'

/** The portal's pages for access; each returns [title, body]. */
type Page = [string, SafeHtml]

export const SIGN_OUT_PATH = '/portal/sign-out'
export const HOME_PATH = '/portal/'

export function signedOutPage(): Page {
  return [
    'Not signed in',
    html`
<h1>Not signed in</h1>
<p>You are not signed in to the portal. Sign in with a sign-in link; ask your operator for a new one.</p>`,
  ]
}

export function linkExpiredPage(): Page {
  return [
    'Sign-in link expired',
    html`
<h1>This sign-in link has expired</h1>
<p>A sign-in link works once, and only for a short time. Ask your operator for a new one.</p>`,
  ]
}

export function crossOriginPage(): Page {
  return [
    'Not allowed',
    html`
<h1>Not allowed</h1>
<p>This form can only be sent from the portal itself. Nothing was changed.</p>`,
  ]
}

/**
 * A sign-in link opened while this browser is signed in (issue 21, 8d): ask before the session is
 * replaced. "Continue" posts the link back (same-origin only, like every portal form); "Stay" is
 * a plain link home, which keeps the session and leaves the link unused.
 */
export function switchAccountPage(current: AccountRecord, target: AccountRecord, continueAction: string): Page {
  const name = (a: AccountRecord) => a.name ?? a.public_id
  return [
    'Switch account?',
    html`
<h1>Switch account?</h1>
<p>You are signed in to <strong>${name(current)}</strong> (account <code>${current.public_id}</code>).</p>
<p>This sign-in link signs you in to <strong>${name(target)}</strong> (account <code>${target.public_id}</code>) instead. Continue as <strong>${name(target)}</strong>?</p>
<form method="post" action="${continueAction}">
<button type="submit">Continue as ${name(target)}</button>
</form>
<p><a href="${HOME_PATH}">Stay signed in to ${name(current)}</a></p>`,
  ]
}
