import { Type, type Static } from 'typebox'
import { ContractVersionLiteral, NullableString } from './common.ts'
import { Contact, EmittedContact } from './contact.ts'

/** A keyset-paged list of Contacts (contract 2.3). */
export const ContactList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(Contact),
    has_more: Type.Boolean(),
    contract_version: ContractVersionLiteral(),
    next_cursor: Type.Optional(NullableString({ description: 'opaque keyset cursor' })),
  },
  { title: 'ContactList', additionalProperties: false },
)

export type ContactList = Static<typeof ContactList>

/**
 * The list as readContactList emits it: its contacts are EmittedContacts and `next_cursor` is
 * always present (null on the last page). A refinement of ContactList, never served (see
 * contact.ts for why the served schema stays as the contract states it).
 */
export const EmittedContactList = Type.Object(
  {
    ...ContactList.properties,
    data: Type.Array(EmittedContact),
    next_cursor: NullableString(),
  },
  { additionalProperties: false },
)

export type EmittedContactList = Static<typeof EmittedContactList>
