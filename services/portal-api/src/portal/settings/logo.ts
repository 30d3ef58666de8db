import multipart from '@fastify/multipart'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { logoOf, MAX_LOGO_BYTES, removePortalLogo, setPortalLogo, sniffLogo, type LogoProblem } from '@lsv/shared/domain/tenants/logo.ts'
import { ASSET_LOGO, html, redirectTo, sendPage } from '../kit/page.ts'
import { fieldValue, formOf } from '../kit/forms.ts'
import { sessionOf } from '../session.ts'
import { auditOf } from '../kit/audited.ts'

const SETTINGS_PATH = '/portal/settings'
export const LOGO_PATH = `${SETTINGS_PATH}/logo`
const REMOVE_PATH = `${LOGO_PATH}/delete`
/** where a refusal sends the tenant back to: the Settings screen, at the logo's field */
const FIELD_ANCHOR = 'brand-logo'

/**
 * The upload's limits (busboy's, through @fastify/multipart): one file of at most the logo's
 * size, no other field worth the name (the form has only the file; the portal's forms carry no
 * token: the session and the same-origin check stand for it), few parts and headers. A file over
 * `fileSize` is cut off at that size and reported, so at most this much of it is ever held.
 */
const UPLOAD_LIMITS = { files: 1, fileSize: MAX_LOGO_BYTES, fields: 2, fieldSize: 1024, fieldNameSize: 100, parts: 3, headerPairs: 20 }

/** 303 back to the form, the refusal named by its code (domain/tenants/logo.ts words it) */
const refuse = (reply: FastifyReply, problem: LogoProblem) => redirectTo(reply, `${SETTINGS_PATH}?logo_problem=${problem}#${FIELD_ANCHOR}`)

/** The bytes of the form's one file, or why there are none (a problem code). */
async function uploadedBytes(request: FastifyRequest): Promise<Uint8Array | LogoProblem> {
  try {
    const file = await request.file({ limits: UPLOAD_LIMITS })
    if (!file) return 'empty'
    const bytes = await file.toBuffer()
    return bytes.length === 0 ? 'empty' : bytes
  } catch (err) {
    // over fileSize: the plugin stops at the limit and throws; anything else (not multipart, too
    // many parts, a cut-off body) is an upload the portal could not read
    return (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE' ? 'too-large' : 'unreadable'
  }
}

/**
 * The logo's routes on the Settings screen (issue 22, job 9; docs/portal.md, "Branding"): the
 * upload, and its removal behind a confirmation page. Registered in the screens' scope, so the
 * session and the same-origin check (session.ts, an `onRequest` hook) run before a byte of any
 * body is read.
 *
 * The upload is `multipart/form-data`, parsed in its own encapsulated scope only: the plugin's
 * parser there only marks the request, and the handler reads the file (request.file()) after the
 * hooks admitted the caller, within UPLOAD_LIMITS. Every answer is a 303: to Settings with a
 * flash when saved, or with a refusal code shown next to the field.
 */
export function registerLogoRoutes(scope: App, deps: PlatformDeps): void {
  scope.register(async (upload: App) => {
    await upload.register(multipart, { limits: UPLOAD_LIMITS })
    upload.post(LOGO_PATH, { schema: { hide: true } }, async (request, reply) => {
      const { account } = sessionOf(request)
      const bytes = await uploadedBytes(request)
      if (typeof bytes === 'string') return refuse(reply, bytes)
      const sniffed = sniffLogo(bytes)
      if (typeof sniffed === 'string') return refuse(reply, sniffed)
      await setPortalLogo(
        auditOf(deps, request).change((a: AccountRecord) => {
          const logo = logoOf(a)
          return { action: 'branding.logo_set', target: { account_id: account.id }, details: logo ? { ...logo } : {} }
        }),
        account.id,
        bytes,
      )
      return redirectTo(reply, SETTINGS_PATH, 'logo-saved')
    })
  })

  scope.get(REMOVE_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const logo = logoOf(account)
    // nothing to remove: back to the screen, which says so
    if (!logo) return redirectTo(reply, SETTINGS_PATH)
    return sendPage(reply, {
      status: 200,
      account,
      current: SETTINGS_PATH,
      title: 'Remove the logo?',
      body: html`<div class="confirm card" role="alert" id="confirm">
<p><img class="logo-preview" src="${ASSET_LOGO}/${logo.id}" alt="The current logo"></p>
<p>The logo will no longer be shown in the header of your portal screens, and the image is deleted. You can upload a logo again at any time. The removal is recorded in the audit log.</p>
<form method="post" action="${REMOVE_PATH}" class="actions">
<input type="hidden" name="confirm" value="yes">
<button type="submit" class="danger">Remove logo</button>
<a href="${SETTINGS_PATH}#${FIELD_ANCHOR}">Cancel</a>
</form>
</div>`,
    })
  })

  scope.post(REMOVE_PATH, { schema: { hide: true } }, async (request, reply) => {
    // a post without the confirmation (crafted, or an old page) is sent to the question
    if (fieldValue(formOf(request.body), 'confirm') !== 'yes') return redirectTo(reply, REMOVE_PATH)
    const { account } = sessionOf(request)
    // the image removed, as the session's read of the account saw it (the written record has none)
    const removed = logoOf(account)
    const details: Record<string, string> = removed ? { id: removed.id } : {}
    await removePortalLogo(
      auditOf(deps, request).change(() => ({ action: 'branding.logo_removed', target: { account_id: account.id }, details })),
      account.id,
    )
    return redirectTo(reply, SETTINGS_PATH, 'logo-removed')
  })
}
