import { Type, type Static } from 'typebox'
import { ContractVersionLiteral, NullableString } from './common.ts'
import { Contact } from './contact.ts'

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
