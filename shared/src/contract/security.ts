/**
 * OpenAPI security schemes (contract section 5 and the management API). Routes name them in
 * `schema.security`; the OpenAPI generator declares them under `components.securitySchemes`.
 */
export const SECURITY_SCHEMES = {
  bearerKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'tenant API key (prefix `lsk_`): `Authorization: Bearer <API_KEY>`. Present exactly one of the two key forms.',
  },
  apiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'tenant API key, equivalent to the bearer form',
  },
  webhookTokenHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'x-webhook-token',
    description: 'per-source inbound webhook token (preferred form); checked when both forms are present',
  },
  webhookTokenQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'per-source inbound webhook token as a query parameter, only for senders that cannot set a header',
  },
  operatorToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'operator token of the management API (`OPERATOR_TOKEN` / Secret Manager `operator-token`)',
  },
} as const

/** Ready-made `schema.security` values: any one listed requirement satisfies the operation. */
export const SECURITY = {
  /** no authentication (e.g. `GET /api/v1/schema`) */
  none: [] as Array<Record<string, string[]>>,
  /** tenant API key, bearer or `x-api-key` */
  apiKey: [{ bearerKey: [] }, { apiKeyHeader: [] }] as Array<Record<string, string[]>>,
  /** per-source token, header or query */
  sourceToken: [{ webhookTokenHeader: [] }, { webhookTokenQuery: [] }] as Array<Record<string, string[]>>,
  /**
   * the partner CRM webhook (contract 4.5, section 5 rule 8): a location token, header or query;
   * until the tokenized-URL cutover a call with no token at all is also accepted (and flagged),
   * which the empty requirement `{}` says. After the cutover that call answers 401.
   */
  partnerCrm: [{ webhookTokenHeader: [] }, { webhookTokenQuery: [] }, {}] as Array<Record<string, string[]>>,
  /** operator bearer token */
  operator: [{ operatorToken: [] }] as Array<Record<string, string[]>>,
}
