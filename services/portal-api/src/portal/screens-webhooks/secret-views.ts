import { html, type SafeHtml } from '../kit/page.ts'
import { when } from '../kit/time.ts'
import { webhookPath } from './paths.ts'

/** The signing secret's part of a webhook's page: its view model. */
interface SigningSecretView {
  integrationId: string
  /** when the previous secret stops signing, while a rotation’s grace runs (secretGraceEndOf); else null */
  graceEnd: string | null
}

/**
 * The id of the signing secret's section: where "End it now" lands (a redirect to `#secret`), so
 * the result is where the browser is, not at the top of the page.
 */
export const SECRET_SECTION_ID = 'secret'

/** While a rotation's grace runs: until when the old secret signs too, and "End it now" (a confirmation first). */
function graceNote(base: string, graceEnd: string): SafeHtml {
  return html`<div class="card" id="secret-grace">
<p>The previous secret still signs every delivery beside the new one (both signatures are in <code>webhook-signature</code>) and stops ${when(graceEnd)}.</p>
<form method="get" action="${base}/secret/end-grace"><button type="submit" class="danger">End it now…</button></form>
</div>`
}

/** Reveal, rotate with a grace, and the grace in force. */
export function secretSection(v: SigningSecretView): SafeHtml {
  const base = webhookPath(v.integrationId)
  return html`<section aria-labelledby="secret-h" id="${SECRET_SECTION_ID}" tabindex="-1">
<h3 id="secret-h">Signing secret</h3>
<p>The secret is hidden. Revealing it is recorded in the audit log.</p>
${v.graceEnd ? graceNote(base, v.graceEnd) : ''}
<div class="actions">
<form method="post" action="${base}/secret/reveal"><button type="submit" class="secondary">Reveal secret</button></form>
<form method="post" action="${base}/secret/rotate" class="card">
<label for="grace">Keep the old secret signing for</label>
<select id="grace" name="grace_seconds">
<option value="86400">24 hours</option>
<option value="3600">1 hour</option>
<option value="604800">7 days</option>
<option value="0">no time: stop it now</option>
</select>
<p><button type="submit" class="secondary">Rotate secret</button></p>
</form>
</div>
</section>`
}
