import { Type, type Static } from 'typebox'

/**
 * Wire shapes of the audit log (docs/portal.md, "Audit log"; docs/management-api.md):
 * `GET /api/v1/admin/accounts/{accountId}/audit-log`, newest first, keyset pages.
 */

const AUDIT_ENTRY_ID_PATTERN = '^\\d{13}-[0-9a-f]{16}$'
export const AUDIT_PAGE_DEFAULT = 50
const AUDIT_PAGE_MAX = 200

export const AuditLogQuery = Type.Object(
  {
    before: Type.Optional(Type.String({ pattern: AUDIT_ENTRY_ID_PATTERN, description: 'the `next_before` of the previous page: only older entries' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_PAGE_MAX, default: AUDIT_PAGE_DEFAULT })),
  },
  { title: 'AuditLogQuery', additionalProperties: false },
)

const AuditValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])

const AuditEntry = Type.Object(
  {
    id: Type.String({ pattern: AUDIT_ENTRY_ID_PATTERN, description: 'time-ordered: milliseconds (13 digits), then 16 random hex digits' }),
    at: Type.String({ format: 'date-time' }),
    actor: Type.String({ description: "who: `portal session <first 12 hex digits of the session record's hash>`" }),
    action: Type.String({ description: 'what, e.g. `api_key.create`, `connection.mappings`, `domains.set`' }),
    target: Type.Record(Type.String(), Type.String(), { description: 'the ids acted on' }),
    details: Type.Record(Type.String(), Type.Union([AuditValue, Type.Array(AuditValue)]), { description: 'further facts; never a secret' }),
  },
  { title: 'AuditEntry', additionalProperties: false },
)

export const AuditLogPage = Type.Object(
  {
    data: Type.Array(AuditEntry),
    next_before: Type.Union([Type.String(), Type.Null()], { description: 'pass as `before` for the next (older) page; null on the last page' }),
  },
  { title: 'AuditLogPage', additionalProperties: false },
)

export type AuditLogQuery = Static<typeof AuditLogQuery>
export type AuditLogPage = Static<typeof AuditLogPage>
