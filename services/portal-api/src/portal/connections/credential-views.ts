import type { ApiKeyView, ConnectionView } from '@lsv/shared/contract/admin.ts'
import { DEFAULT_ROTATION_GRACE_SECONDS } from '@lsv/shared/contract/admin.ts'
import { ALL_SCOPES, type ApiKeyRecord, type LocationRecord } from '@lsv/shared/model/records.ts'
import { html, type SafeHtml } from '../kit/html.ts'
import type { FieldErrors } from '../kit/forms.ts'
import { errorOf, formError, help, textField, uid } from '../kit/ui.ts'
import { when } from '../kit/time.ts'
import { longId } from '../kit/ids.ts'
import { questionView } from '../kit/confirm.ts'
import { connectionPath } from './paths.ts'

/** The grace periods offered (issue 29, D7): chosen from a list, not typed in seconds. The routes still take any grace the management API takes. */
const GRACE_CHOICES: readonly (readonly [number, string])[] = [
  [0, 'None: at once'],
  [3600, '1 hour'],
  [86_400, '24 hours'],
  [604_800, '7 days'],
]

/** The grace choice of a rotation (default: the API's default grace) or a revocation (default none: at once). */
function graceField(value: number = DEFAULT_ROTATION_GRACE_SECONDS): SafeHtml {
  const id = uid('grace')
  return html`<span><label for="${id}">Grace</label><select id="${id}" name="grace_seconds">${GRACE_CHOICES.map(
    ([seconds, words]) => html`<option value="${seconds}"${seconds === value ? html` selected` : ''}>${words}</option>`,
  )}</select></span>`
}

/**
 * A key's state. A rotated or revoked key keeps working until its revoked_at (the grace period),
 * so a revoked_at still ahead reads as when it stops, not as "revoked" (issue 22, 3).
 */
function keyState(k: Pick<ApiKeyRecord, 'revoked_at' | 'expires_at'>, now: number): SafeHtml | string {
  if (k.revoked_at && Date.parse(k.revoked_at) > now) return html`stops working ${when(k.revoked_at)} (grace period)`
  if (k.revoked_at) return html`revoked ${when(k.revoked_at)}`
  if (k.expires_at && Date.parse(k.expires_at) <= now) return html`expired ${when(k.expires_at)}`
  return k.expires_at ? html`active until ${when(k.expires_at)}` : 'active'
}

/** The path of a key's revocation: its GET is the question, its POST (confirmed) revokes. */
export const revokePath = (connectionId: string, keyId: string) => `${connectionPath(connectionId)}/keys/${encodeURIComponent(keyId)}/revoke`

/** A key's actions: rotate and revoke while it is active, "Revoke now" during its grace, none after. Revoking asks first (issue 29, D7). */
function keyActions(c: ConnectionView, k: ApiKeyRecord, now: number): SafeHtml | '' {
  const revoke = revokePath(c.id, k.id)
  if (k.revoked_at) {
    return Date.parse(k.revoked_at) > now
      ? html`<form method="get" action="${revoke}"><input type="hidden" name="grace_seconds" value="0"><button type="submit" class="danger">Revoke now</button></form>`
      : ''
  }
  return html`<div class="actions">
<form method="post" action="${rotatePath(c.id, k.id)}">${graceField()}<button type="submit">Rotate</button></form>
<form method="get" action="${revoke}">${graceField(0)}<button type="submit" class="danger">Revoke</button></form>
</div>`
}

/** What a refused "Create key" form sent, shown again as typed: its name and the scopes ticked. */
export interface KeyFormValues {
  name: string
  scopes: string[]
}

/** The New key form's values before anything was typed: no name, contacts:write. */
const NEW_KEY: KeyFormValues = { name: '', scopes: ['contacts:write'] }

interface KeysSection {
  connection: ConnectionView
  keys: ApiKeyRecord[]
  errors?: FieldErrors | null
  /** the New key form as sent, when it was refused */
  values?: KeyFormValues | null
  now?: number
}

export function keysSection({ connection: c, keys, errors, values, now = Date.now() }: KeysSection): SafeHtml {
  const typed = values ?? NEW_KEY
  const rows = keys.map(
    (k) => html`<tr>
<td data-label="Key"><code>${k.prefix}…</code></td><td data-label="Name">${k.name ?? '—'}</td><td data-label="Scopes">${k.scopes.join(', ')}</td><td data-label="Created">${when(k.created_at)}</td>
<td data-label="State">${keyState(k, now)}</td>
<td>${keyActions(c, k, now)}</td></tr>`,
  )
  return html`<section aria-labelledby="keys-h">
<h2 id="keys-h">API keys</h2>
${keys.length ? html`<div class="table-wrap"><table class="keys"><thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p>No keys yet.</p>`}
${help('Rotate: a new key now, the old one keeps working for the grace period.', 'Rotate with no grace stops the old key at once, so you confirm it on the next page. Revoke: the key stops after the grace (none = at once); you confirm on the next page. A key in its grace period can be revoked now.')}
<h3>New key</h3>
<form method="post" action="${connectionPath(c.id)}/keys">
${formError(errors)}
<fieldset><legend>Scopes</legend>
${errorOf(errors, '/scopes') ? html`<p class="field-error">${errorOf(errors, '/scopes')}</p>` : ''}
${ALL_SCOPES.map((s) => html`<label class="inline"><input type="checkbox" name="scopes" value="${s}"${typed.scopes.includes(s) ? html` checked` : ''}> <code>${s}</code></label>`)}
</fieldset>
${textField({ label: 'Name (optional)', name: 'name', value: typed.name, error: errorOf(errors, '/name') })}
<p><button type="submit">Create key</button></p>
</form>
</section>`
}

interface RevokeQuestion {
  connection: ConnectionView
  key: ApiKeyView
  graceSeconds: number
  /** when the key stops working with that grace (ISO) */
  stopsAt: string
  now: number
}

/** The grace in words: a listed choice by its name, any other (a crafted address) in seconds. */
const graceWords = (seconds: number) => GRACE_CHOICES.find(([s]) => s === seconds)?.[1] ?? `${seconds} seconds`

const keyNamed = (key: ApiKeyView): SafeHtml => html`<strong>API key <code>${key.prefix}…</code></strong>${key.name ? html` (${key.name})` : ''}`

/** The way back from a question with nothing to do: the keys of the connection. */
const backToKeys = (c: ConnectionView): SafeHtml => html`<p><a href="${connectionPath(c.id)}#keys-h">Back to the connection</a></p>`

/**
 * "Revoke this API key?": names the key and when it stops; the form posts the revocation confirmed.
 * A key that already stops by then (revoked, or in a grace that ends sooner: Back after the
 * revocation) is said so, with the way back and no form: there is nothing left to confirm.
 */
export function revokeQuestionView({ connection: c, key, graceSeconds, stopsAt, now }: RevokeQuestion): { title: string; body: SafeHtml } {
  const named = keyNamed(key)
  if (key.revoked_at !== null && Date.parse(key.revoked_at) <= now) {
    return {
      title: 'API key already revoked',
      body: html`<div class="card" id="confirm">
<p>${named} is already revoked: it stopped working ${when(key.revoked_at)}. Nothing to do.</p>
${backToKeys(c)}
</div>`,
    }
  }
  if (key.revoked_at !== null && Date.parse(key.revoked_at) <= Date.parse(stopsAt)) {
    return {
      title: 'API key already stops working',
      body: html`<div class="card" id="confirm">
<p>${named} is already set to stop working ${when(key.revoked_at)} (grace period), no later than this revocation would. Nothing to do; to stop it at once, use Revoke now in its row.</p>
${backToKeys(c)}
</div>`,
    }
  }
  const stops =
    graceSeconds === 0
      ? html`<p>${named} stops working at once: pushes with it are refused (401) from now on.</p>`
      : html`<p>${named} keeps working for a grace of ${graceWords(graceSeconds)}, then stops, ${when(stopsAt)}: pushes with it are refused (401) from then on.</p>`
  return {
    title: 'Revoke this API key?',
    body: questionView({
      what: html`${stops}
<p>Connection: ${c.name ?? c.id}. Scopes: ${key.scopes.join(', ')}. The revocation is recorded in the audit log. It cannot be undone: a revoked key never works again; create a new key instead.</p>`,
      action: revokePath(c.id, key.id),
      fields: { grace_seconds: String(graceSeconds) },
      button: graceSeconds === 0 ? 'Revoke key now' : 'Revoke key',
      cancel: `${connectionPath(c.id)}#keys-h`,
    }),
  }
}

/** The path of a key's rotation (its POST), and of the question a rotation with no grace asks first (a GET). */
const rotatePath = (connectionId: string, keyId: string) => `${connectionPath(connectionId)}/keys/${encodeURIComponent(keyId)}/rotate`
export const rotateNowPath = (connectionId: string, keyId: string) => `${rotatePath(connectionId, keyId)}-now`

interface RotateNowQuestion {
  connection: ConnectionView
  key: ApiKeyView
  now: number
}

/**
 * "Rotate this API key and stop the old one now?": a rotation with no grace stops the old key at
 * once, so it asks first, as a revocation does; the form posts the rotation confirmed. A key that
 * no longer works (rotated or revoked already: Back after the rotation) cannot be rotated: said so,
 * with the way back and no form.
 */
export function rotateNowQuestionView({ connection: c, key, now }: RotateNowQuestion): { title: string; body: SafeHtml } {
  const named = keyNamed(key)
  const stopped = [key.revoked_at, key.expires_at].find((at) => at !== null && Date.parse(at) <= now)
  if (stopped) {
    return {
      title: 'API key stopped working',
      body: html`<div class="card" id="confirm">
<p>${named} stopped working ${when(stopped)}, so it cannot be rotated. Nothing to do; create a new key if you need one.</p>
${backToKeys(c)}
</div>`,
    }
  }
  return {
    title: 'Rotate this API key and stop the old one now?',
    body: questionView({
      what: html`<p>A new key replaces ${named}, and the old key stops working at once: pushes with it are refused (401) from now on, so every sender still using it fails until you give it the new key. A grace period (1 hour, 24 hours or 7 days) avoids that.</p>
<p>Connection: ${c.name ?? c.id}. Scopes: ${key.scopes.join(', ')}. The new key is shown once, on the next page. The rotation is recorded in the audit log.</p>`,
      action: rotatePath(c.id, key.id),
      fields: { grace_seconds: '0' },
      button: 'Rotate and stop the old key now',
      cancel: `${connectionPath(c.id)}#keys-h`,
    }),
  }
}

export function tokenSection(c: ConnectionView, errors: FieldErrors | null | undefined): SafeHtml {
  return html`<section aria-labelledby="token-h">
<h2 id="token-h">Webhook source</h2>
<p>URL: <code>${c.webhook_url ?? ''}</code></p>
${help(html`Callers send the source token in <code>x-webhook-token</code>.`, 'It was shown once when the connection was created; rotate to get a new one.')}
<form method="post" action="${connectionPath(c.id)}/token/rotate" class="actions">
${formError(errors)}
${graceField()}<button type="submit">Rotate token</button>
</form>
</section>`
}

interface LocationsSection {
  connection: ConnectionView
  locations: LocationRecord[]
  /** the partner CRM's webhook URL, shown with the token left out */
  webhookUrl: string
  errors?: FieldErrors | null
}

export function locationsSection({ connection: c, locations, webhookUrl, errors }: LocationsSection): SafeHtml {
  const base = connectionPath(c.id)
  const rows = locations.map(
    (l) => html`<tr>
<td>${longId(l.location_id, 'location id')}</td><td><code>${webhookUrl}?token=…</code></td><td>${l.active ? 'active' : 'removed'}</td><td>${when(l.created_at)}</td>
<td>${
      l.active
        ? html`<div class="actions">
<form method="post" action="${base}/locations/${encodeURIComponent(l.location_id)}/rotate">${graceField()}<button type="submit">Rotate token</button></form>
<form method="post" action="${base}/locations/${encodeURIComponent(l.location_id)}/remove"><button type="submit" class="danger">Remove</button></form>
</div>`
        : ''
    }</td></tr>`,
  )
  return html`<section aria-labelledby="loc-h">
<h2 id="loc-h">Partner CRM locations</h2>
<form method="post" action="${base}/require-token" class="card">
<p><strong>Require token:</strong> ${c.require_token ? 'on — calls without a location token are refused (401).' : 'off — calls without a token are still accepted for this connection.'}</p>
<input type="hidden" name="require_token" value="${c.require_token ? 'false' : 'true'}">
<button type="submit">${c.require_token ? 'Accept token-less calls again' : 'Require a token from now on'}</button>
</form>
${locations.length ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Location</th><th scope="col">Tokenized URL</th><th scope="col">State</th><th scope="col">Added</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p>No locations yet.</p>`}
<p class="hint">A location's token is shown once, in its tokenized URL, when it is added or rotated.</p>
<h3>Add a location</h3>
<form method="post" action="${base}/locations">
${formError(errors, {
  // addLocation's only conflict: the id is an active location of this connection already
  conflict:
    'That location id is already added to this connection, so nothing was changed. Its URL was shown when it was added; to get a new one, use Rotate token in its row above.',
})}
${textField({ label: 'Location id', name: 'location_id', required: true, error: errorOf(errors, '/location_id') })}
<p><button type="submit">Add location</button></p>
</form>
</section>`
}
