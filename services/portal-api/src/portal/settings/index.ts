import { Type } from 'typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { AuthorizedDomainsBody, CreateCustomFieldBody } from '@lsv/shared/contract/admin.ts'
import { getAuthorizedDomains, setAuthorizedDomains } from '@lsv/shared/domain/tenants/domains.ts'
import { createCustomField, listCustomFields } from '@lsv/shared/domain/tenants/custom-fields.ts'
import { CUSTOM_FIELD_TYPES, type AccountRecord, type CustomFieldDefinition } from '@lsv/shared/model/records.ts'
import { frameAncestorsOf } from '@lsv/shared/domain/tenants/frame-ancestors.ts'
import { brandingOf, setPortalBranding } from '@lsv/shared/domain/tenants/branding.ts'
import type { LogoRef, PortalBranding } from '@lsv/shared/model/records.ts'
import { html } from '../kit/html.ts'
import { checkAgainst, checkForm, fieldErrorsOf, fieldValue, type FieldErrors } from '../kit/forms.ts'
import { redirectTo, sendPage } from '../kit/page.ts'
import { sessionOf } from '../session.ts'
import { errorOf, formError, FormBody, textField } from '../kit/ui.ts'
import { when } from '../kit/time.ts'
import { logoOf, logoProblemText } from '@lsv/shared/domain/tenants/logo.ts'
import { ASSET_LOGO } from '../kit/page.ts'
import { LOGO_PATH, registerLogoRoutes } from './logo.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'
import { auditOf } from '../kit/audited.ts'
import { ALERT_FLASHES, alertsSection, registerAlertRoutes, type AlertsFormState } from './alerts.ts'

const SETTINGS_PATH = '/portal/settings'
// logo_problem: the upload's refusal code (settings/logo.ts), worded by domain/tenants/logo.ts
const FlashQuery = Type.Object({ flash: Type.Optional(Type.String()), logo_problem: Type.Optional(Type.String({ maxLength: 32 })) })

interface SettingsState {
  domainsText?: string
  domainErrors?: FieldErrors | null
  fieldErrors?: FieldErrors | null
  fieldValues?: Record<string, string>
  brandingErrors?: FieldErrors | null
  brandingValues?: { display_name: string; accent: string }
  /** the logo upload's refusal, in words (from the redirect's code) */
  logoError?: string | null
  alerts?: AlertsFormState
}

/** One domain a line: blank lines ignored. */
const linesOf = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '')

/**
 * Screen 4, Settings (docs/portal.md): authorized domains and custom field definitions, through
 * the management API's domain functions (routes/admin/domains.ts, custom-fields.ts); audited.
 */
function registerSettingsScreen(scope: App, deps: PlatformDeps): void {
  const render = async (request: FastifyRequest, reply: FastifyReply, status: number, s: SettingsState, flash?: string | null) => {
    const { account } = sessionOf(request)
    const { domains } = await getAuthorizedDomains(deps, account.id)
    const { data: fields } = await listCustomFields(deps, account.id)
    const lines = s.domainsText !== undefined ? linesOf(s.domainsText) : domains
    // the domain's issues name a line by its index (/domains/i)
    const domainIssues = Object.entries(s.domainErrors ?? {})
      .filter(([p]) => p.startsWith('/domains/'))
      .map(([p, m]) => `line ${Number(p.split('/')[2]) + 1} (${lines[Number(p.split('/')[2])] ?? ''}): ${m}`)
    const whole = s.domainErrors?.['/domains'] ?? s.domainErrors?.[''] ?? null
    const v = s.fieldValues ?? {}
    return sendPage(reply, {
      status: status,
      account,
      current: SETTINGS_PATH,
      flash,
      title: 'Settings',
      body: html`
<section aria-labelledby="dom-h">
<h2 id="dom-h">Authorized domains</h2>
<p class="hint" id="domains-hint">Sites on these domains (and their subdomains) may use your account's tracking. One domain a line, such as <code>example.com</code>.</p>
<form method="post" action="${SETTINGS_PATH}/domains">
${whole ? html`<p class="field-error" id="domains-error">${whole}</p>` : ''}
${domainIssues.length ? html`<ul class="field-error" id="domains-issues">${domainIssues.map((m) => html`<li>${m}</li>`)}</ul>` : ''}
<label for="domains">Domains</label>
<textarea id="domains" name="domains" aria-describedby="domains-hint${whole ? ' domains-error' : ''}${domainIssues.length ? ' domains-issues' : ''}"${whole || domainIssues.length ? html` aria-invalid="true"` : ''}>${s.domainsText ?? domains.join('\n')}</textarea>
<p><button type="submit">Save domains</button></p>
</form>
</section>
<section aria-labelledby="cf-h">
<h2 id="cf-h">Custom fields</h2>
${
  fields.length
    ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Key</th><th scope="col">Label</th><th scope="col">Type</th><th scope="col">Created</th></tr></thead>
<tbody>${fields.map((f) => html`<tr><td><code>${f.key}</code></td><td>${f.label}</td><td>${f.type}</td><td>${when(f.created_at)}</td></tr>`)}</tbody></table></div>`
    : html`<p>No custom fields yet.</p>`
}
<p class="hint">A field mapping to <code>custom_fields.&lt;key&gt;</code> fills a custom field; define it here first.</p>
<h3>New custom field</h3>
<form method="post" action="${SETTINGS_PATH}/custom-fields">
${formError(s.fieldErrors)}
${textField({ label: 'Key', name: 'key', value: v.key, required: true, hint: 'lower-case letters, digits and _; it cannot be changed later', error: errorOf(s.fieldErrors, '/key') })}
${textField({ label: 'Label', name: 'label', value: v.label, required: true, error: errorOf(s.fieldErrors, '/label') })}
<label for="cf-type">Type</label>
${errorOf(s.fieldErrors, '/type') ? html`<p class="field-error" id="cf-type-error">${errorOf(s.fieldErrors, '/type')}</p>` : ''}
<select id="cf-type" name="type">${CUSTOM_FIELD_TYPES.map((t) => html`<option value="${t}"${(v.type ?? 'text') === t ? html` selected` : ''}>${t}</option>`)}</select>
<p><button type="submit">Create custom field</button></p>
</form>
</section>
<section aria-labelledby="emb-h">
<h2 id="emb-h">Embedding</h2>
${
  frameAncestorsOf(account).length
    ? html`<p>This portal may be shown inside pages of: </p><ul id="frame-ancestors">${frameAncestorsOf(account).map((o) => html`<li><code>${o}</code></li>`)}</ul>`
    : html`<p id="frame-ancestors">No other site may show this portal inside its pages.</p>`
}
<p class="hint">Set by your operator (it changes how this portal's sign-in works), so it cannot be changed here.</p>
</section>
${brandingSection(account, s)}
${alertsSection(account, deps.alertMail.enabled, s.alerts)}`,
    })
  }

  scope.get(SETTINGS_PATH, { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) =>
    render(request, reply, 200, { logoError: logoProblemText(request.query.logo_problem) }),
  )

  scope.post(`${SETTINGS_PATH}/domains`, { schema: { hide: true, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const text = fieldValue(request.body, 'domains')
    const body = { domains: linesOf(text) }
    const invalid = checkAgainst(AuthorizedDomainsBody, body)
    if (invalid) return render(request, reply, 400, { domainsText: text, domainErrors: invalid })
    try {
      const withEntry = auditOf(deps, request).change((a: AccountRecord) => ({
        action: 'domains.set',
        target: { account_id: account.id },
        details: { domains: a.authorized_domains },
      }))
      await setAuthorizedDomains(withEntry, account.id, body.domains)
    } catch (err) {
      return render(request, reply, 400, { domainsText: text, domainErrors: fieldErrorsOf(err) })
    }
    return redirectTo(reply, SETTINGS_PATH, 'domains-saved')
  })

  scope.post(`${SETTINGS_PATH}/branding`, { schema: { hide: true, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const values = { display_name: fieldValue(request.body, 'display_name'), accent: fieldValue(request.body, 'accent') }
    try {
      const withEntry = auditOf(deps, request).change((a: AccountRecord) => ({
        action: 'branding.set',
        target: { account_id: account.id },
        // the logo has its own entries (branding.logo_set, branding.logo_removed: settings/logo.ts)
        details: { display_name: brandingOf(a).display_name, accent: brandingOf(a).accent },
      }))
      await setPortalBranding(withEntry, account.id, values)
    } catch (err) {
      return render(request, reply, 400, { brandingErrors: fieldErrorsOf(err), brandingValues: values })
    }
    return redirectTo(reply, SETTINGS_PATH, 'branding-saved')
  })

  scope.post(`${SETTINGS_PATH}/custom-fields`, { schema: { hide: true, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const values = { key: fieldValue(request.body, 'key').trim(), label: fieldValue(request.body, 'label').trim(), type: fieldValue(request.body, 'type') }
    const checked = checkForm(CreateCustomFieldBody, values)
    if (!checked.ok) return render(request, reply, 400, { fieldErrors: checked.errors, fieldValues: values })
    try {
      const withEntry = auditOf(deps, request).change((d: CustomFieldDefinition) => ({
        action: 'custom_field.create',
        target: { custom_field: d.key },
        details: { type: d.type, label: d.label },
      }))
      await createCustomField(withEntry, account.id, checked.value)
    } catch (err) {
      return render(request, reply, 400, { fieldErrors: fieldErrorsOf(err), fieldValues: values })
    }
    return redirectTo(reply, SETTINGS_PATH, 'custom-field-created')
  })

  registerLogoRoutes(scope, deps)
  registerAlertRoutes(scope, deps, (request, reply, status, alerts) => render(request, reply, status, { alerts }))
}

/**
 * The branding form (issue 22, job 9; docs/portal.md, "Branding"): a display name and an accent
 * colour, checked by domain/tenants/branding.ts (its refusals are written for the tenant).
 */
function brandingSection(account: AccountRecord, s: SettingsState) {
  const saved: PortalBranding = brandingOf(account)
  const v = s.brandingValues ?? { display_name: saved.display_name ?? '', accent: saved.accent ?? '' }
  return html`<section aria-labelledby="brand-h">
<h2 id="brand-h">Branding</h2>
<p class="hint">Your name and colour on every portal screen. Leave a field empty for the default.</p>
<form method="post" action="${SETTINGS_PATH}/branding">
${textField({ id: 'brand-name', label: 'Display name', name: 'display_name', value: v.display_name, hint: 'shown in the header and the window title', error: errorOf(s.brandingErrors, '/display_name') })}
${textField({ id: 'brand-accent', label: 'Accent colour', name: 'accent', value: v.accent, hint: '# and six hex digits, such as #2f6fd6; it must stay readable in light and dark mode', error: errorOf(s.brandingErrors, '/accent') })}
<p class="accent-picker"><label class="inline" for="brand-accent-picker">Or pick it</label> <input type="color" id="brand-accent-picker" value="${/^#[0-9a-f]{6}$/.test(v.accent) ? v.accent : '#1a56c4'}" data-accent-for="brand-accent" aria-describedby="brand-accent-contrast"> <span class="hint" id="brand-accent-contrast" aria-live="polite"></span></p>
${formError(s.brandingErrors && !s.brandingErrors['/display_name'] && !s.brandingErrors['/accent'] ? s.brandingErrors : null)}
<p><button type="submit">Save branding</button></p>
</form>
${logoForm(logoOf(account), s.logoError ?? null)}
</section>`
}

/**
 * The logo (docs/portal.md, "Branding"): a plain multipart form (no script needed), the current
 * logo with its removal (a confirmation page first: settings/logo.ts), and the refusal of the last
 * upload next to the field.
 */
function logoForm(logo: LogoRef | null, error: string | null) {
  const describedBy = `brand-logo-hint${error ? ' brand-logo-error' : ''}`
  return html`<h3 id="logo-h">Logo</h3>
${
  logo
    ? html`<p><img class="logo-preview" id="logo-current" src="${ASSET_LOGO}/${logo.id}" alt="Your current logo"></p>
<form method="get" action="${LOGO_PATH}/delete"><button type="submit" class="danger" id="logo-remove">Remove logo…</button></form>`
    : html`<p id="logo-current">No logo yet: the header shows your name only.</p>`
}
<form method="post" action="${LOGO_PATH}" enctype="multipart/form-data">
<label for="brand-logo">${logo ? 'Replace the logo' : 'Logo image'}</label>
<p class="hint" id="brand-logo-hint">PNG, JPEG or WebP, at most 64 KiB and 1024 × 1024 pixels; shown in the header of every screen.</p>
${error ? html`<p class="field-error" id="brand-logo-error">${error}</p>` : ''}
<input type="file" id="brand-logo" name="logo" accept="image/png,image/jpeg,image/webp" required aria-describedby="${describedBy}"${error ? html` aria-invalid="true"` : ''}>
<p><button type="submit">Upload logo</button></p>
</form>`
}

/** Settings: authorized domains, custom fields, branding and the logo, alerts. */
export const settingsScreen: ScreenDeclaration = {
  path: SETTINGS_PATH,
  nav: 'Settings',
  flashes: {
    'domains-saved': 'Authorized domains saved.',
    'branding-saved': 'Branding saved.',
    'logo-saved': 'Logo saved.',
    'logo-removed': 'Logo removed.',
    'custom-field-created': 'Custom field created.',
    ...ALERT_FLASHES,
  },
  register: registerSettingsScreen,
}
