import { Type, type Static } from 'typebox'
import { StringEnum, Uuid } from './common.ts'

/** `POST /api/contacts/links` (operation mintContactLink, contract 4.2). */

const LINK_TYPES = ['opaque', 'signed'] as const
export type LinkType = (typeof LINK_TYPES)[number]
const MAX_LINK_EXP_SECONDS = 31_536_000

const ContactIdField = Uuid({
  minLength: 1,
  maxLength: 128,
  description: 'names the contact; takes precedence over `source`/`externalId`',
})
const SourceField = Type.String({ minLength: 1, maxLength: 64, description: 'used with `externalId`' })
const ExternalIdField = Type.String({ minLength: 1, maxLength: 256, description: 'used with `source`' })

/**
 * The contact is named by `contactId`, or by both `source` and `externalId`, so a request naming
 * neither fails validation (400 `invalid payload` with `issues`). `contactId` takes precedence
 * when both ways are sent. The alternative is `allOf: [{anyOf: [...]}]` with typed branches
 * (not a bare `anyOf` of `required` lists): code generators such as openapi-typescript then type
 * the body as `{…} & ({contactId} | {source, externalId})` instead of `unknown`.
 */
export const MintLinkBody = Type.Object(
  {
    destinationUrl: Type.String({ minLength: 1, maxLength: 2048, description: 'must resolve to a domain the tenant has authorized' }),
    contactId: Type.Optional(ContactIdField),
    source: Type.Optional(SourceField),
    externalId: Type.Optional(ExternalIdField),
    type: Type.Optional(StringEnum(LINK_TYPES, { default: 'opaque' })),
    expSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LINK_EXP_SECONDS, description: 'meaningful only for `type` = `signed`' })),
  },
  {
    title: 'MintLinkBody',
    allOf: [
      {
        anyOf: [
          { type: 'object', required: ['contactId'], properties: { contactId: ContactIdField } },
          { type: 'object', required: ['source', 'externalId'], properties: { source: SourceField, externalId: ExternalIdField } },
        ],
      },
    ],
  },
)

export const MintLinkResponse = Type.Object(
  {
    ok: Type.Literal(true),
    contactId: Uuid(),
    type: StringEnum(LINK_TYPES),
    token: Type.String({ description: '`a.<43-char base64url>` (opaque) or `s.<keyId>.<claims>.<sig>` (signed)' }),
    link: Type.String({ format: 'uri', description: 'the destination URL with the token appended as query parameter `lsv`' }),
  },
  { title: 'MintLinkResponse', additionalProperties: false },
)

export type MintLinkBody = Static<typeof MintLinkBody>
export type MintLinkResponse = Static<typeof MintLinkResponse>
