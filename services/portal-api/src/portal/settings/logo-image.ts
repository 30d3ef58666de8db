import { Type } from 'typebox'
import type { FastifyReply } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { portalSessionOf } from '@lsv/shared/domain/portal/credential.ts'
import { ASSET_LOGO } from '../kit/page.ts'

const LogoParams = Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{64}$' }) })

/** an image answer carries no page: plain words, never the screens' HTML frame */
const refuse = (reply: FastifyReply, status: number, text: string) =>
  reply.code(status).headers({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }).type('text/plain; charset=utf-8').send(text)

/**
 * The account's logo, `GET /portal/assets/logo/<sha256>` (docs/portal.md, "Branding"), for the
 * `<img>` of the header (layout.ts). Behind the portal session: only the signed-in account's own
 * images are found (BrandAssets is keyed by account, so another account's hash is a 404 like a
 * missing one). It is outside the screens' scope on purpose: a signed-out image request gets a
 * plain 401, not the screens' redirect to sign-in that would remember an image as the page to
 * come back to (return-path.ts). A GET, so no body is read.
 *
 * Headers: the type sniffed at upload (never the client's), `nosniff`, a policy that lets the
 * response run nothing if opened as a document, same-origin use only, and `private` caching for
 * good: the URL changes with the content.
 */
export function registerLogoImage(app: App, deps: PlatformDeps): void {
  app.get(`${ASSET_LOGO}/:id`, { schema: { hide: true, params: LogoParams } }, async (request, reply) => {
    const session = await portalSessionOf(deps, request)
    if (!session) return refuse(reply, 401, 'sign in to the portal')
    const logo = await deps.brandAssets.get(session.account.id, request.params.id)
    if (!logo) return refuse(reply, 404, 'not found')
    return reply
      .headers({
        'content-type': logo.content_type,
        'x-content-type-options': 'nosniff',
        'cache-control': 'private, max-age=31536000, immutable',
        'content-security-policy': "default-src 'none'",
        'cross-origin-resource-policy': 'same-origin',
      })
      .send(Buffer.from(logo.bytes))
  })
}
