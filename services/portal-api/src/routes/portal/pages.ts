import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { html } from '../../portal/kit/html.ts'
import { HOME_PATH, type PageView } from '../../portal/kit/page.ts'

/** The portal's pages for access: each is a page view without an account (no frame, no script). */
type AccessPage = Omit<PageView, 'status' | 'account'>

export function signedOutPage(): AccessPage {
  return {
    title: 'Not signed in',
    body: html`<p>You are not signed in to the portal. Sign in with a sign-in link; ask your operator for a new one.</p>`,
  }
}

export function linkExpiredPage(): AccessPage {
  return {
    title: 'Sign-in link expired',
    heading: 'This sign-in link has expired',
    body: html`<p>A sign-in link works once, and only for a short time. Ask your operator for a new one.</p>`,
  }
}

export function crossOriginPage(): AccessPage {
  return {
    title: 'Not allowed',
    body: html`<p>This form can only be sent from the portal itself. Nothing was changed.</p>`,
  }
}

/**
 * A sign-in link opened while this browser is signed in (issue 21, 8d): ask before the session is
 * replaced. "Continue" posts the link back (same-origin only, like every portal form); "Stay" is
 * a plain link home, which keeps the session and leaves the link unused.
 */
export function switchAccountPage(current: AccountRecord, target: AccountRecord, continueAction: string): AccessPage {
  const name = (a: AccountRecord) => a.name ?? a.public_id
  return {
    title: 'Switch account?',
    body: html`<p>You are signed in to <strong>${name(current)}</strong> (account <code>${current.public_id}</code>).</p>
<p>This sign-in link signs you in to <strong>${name(target)}</strong> (account <code>${target.public_id}</code>) instead. Continue as <strong>${name(target)}</strong>?</p>
<form method="post" action="${continueAction}">
<button type="submit" class="button primary">Continue as ${name(target)}</button>
</form>
<p><a href="${HOME_PATH}">Stay signed in to ${name(current)}</a></p>`,
  }
}
