import { Type, type Static } from 'typebox'
import { StringEnum } from './common.ts'

/** `POST /api/contacts/links` (operation mintContactLink, contract 4.2). */

export const LINK_TYPES = ['opaque', 'signed'] as const
export const MAX_LINK_EXP_SECONDS = 31_536_000

/**
 * The contact is named by `contactId`, or by both `source` and `externalId` (the `anyOf`), so a
 * request naming neither fails validation (400 `invalid payload` with `issues`). `contactId`
 * takes precedence when both ways are sent.
 */
export const MintLinkBody = Type.Object(
  {
    destinationUrl: Type.String({ minLength: 1, maxLength: 2048, description: 'must resolve to a domain the tenant has authorized' }),
    contactId: Type.Optional(Type.String({ format: 'uuid', minLength: 1, maxLength: 128, description: 'names the contact; takes precedence over `source`/`externalId`' })),
    source: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'used with `externalId`' })),
    externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'used with `source`' })),
    type: Type.Optional(StringEnum(LINK_TYPES, { default: 'opaque' })),
    expSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LINK_EXP_SECONDS, description: 'meaningful only for `type` = `signed`' })),
  },
  {
    title: 'MintLinkBody',
    anyOf: [{ required: ['contactId'] }, { required: ['source', 'externalId'] }],
  },
)

export const MintLinkResponse = Type.Object(
  {
    ok: Type.Literal(true),
    contactId: Type.String({ format: 'uuid' }),
    type: StringEnum(LINK_TYPES),
    token: Type.String({ description: '`a.<43-char base64url>` (opaque) or `s.<keyId>.<claims>.<sig>` (signed)' }),
    link: Type.String({ format: 'uri', description: 'the destination URL with the token appended as query parameter `lsv`' }),
  },
  { title: 'MintLinkResponse', additionalProperties: false },
)

export type MintLinkBody = Static<typeof MintLinkBody>
export type MintLinkResponse = Static<typeof MintLinkResponse>
