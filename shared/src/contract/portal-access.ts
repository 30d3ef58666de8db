import { Type, type Static } from 'typebox'
import { LINK_TTL_DEFAULT_SECONDS, LINK_TTL_MAX_SECONDS, LINK_TTL_MIN_SECONDS } from '../model/portal-lifetimes.ts'

/**
 * Wire shapes of portal access (management-api.md, "Portal access"; docs/portal.md): the two
 * management operations and the sign-in link's query. The pages themselves are HTML.
 */

/** `POST /api/v1/admin/accounts/{accountId}/portal-links` body (may be empty). */
export const PortalLinkBody = Type.Object(
  {
    ttl_seconds: Type.Optional(
      Type.Integer({
        minimum: LINK_TTL_MIN_SECONDS,
        maximum: LINK_TTL_MAX_SECONDS,
        default: LINK_TTL_DEFAULT_SECONDS,
        description: 'how long the link works, in seconds (60..3600, default 900)',
      }),
    ),
  },
  { title: 'PortalLinkBody', additionalProperties: false },
)

/** Its 201 answer: the link is shown once; only its token's hash is stored. */
export const PortalLink = Type.Object(
  {
    url: Type.String({ format: 'uri', description: 'absolute sign-in URL on the portal origin; works once, before `expires_at`' }),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { title: 'PortalLink', additionalProperties: false },
)

/** `GET /portal/sign-in` query: the link's token (a name every log line redacts). */
export const SignInQuery = Type.Object({
  token: Type.Optional(Type.String({ description: 'the sign-in link token' })),
})

export type PortalLinkBody = Static<typeof PortalLinkBody>
export type PortalLink = Static<typeof PortalLink>
export type SignInQuery = Static<typeof SignInQuery>
