import { ContactsPushBodyDocumented, PartnerCrmContactBody, PushAccepted } from '@lsv/shared/contract/push.ts'
import { errorResponses } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { SourceIdParams, TokenQuery, WildcardParams } from '@lsv/shared/http/push-route-kit.ts'

/* The push routes' documented schemas (contract 4.3–4.5): bodies are checked by hand (push-route-kit.ts documentationOnly). */

const LIMITS = 'Body cap 8388608 bytes; at most 10000 records. Rate limit: 120 per 60 s and 50,000 per 24 h'

export const pushContactsSchema = {
  operationId: 'pushContacts',
  tags: ['contacts'],
  summary: 'Push a batch of contacts (queued, upserted asynchronously)',
  description: `Requires scope \`contacts:write\`. Idempotent per account on (source, external_id). ${LIMITS} per API key. \`accepted\` counts the records that carry an \`external_id\`; records without one are not stored.`,
  security: SECURITY.apiKey,
  body: ContactsPushBodyDocumented,
  response: { 202: PushAccepted, ...errorResponses(400, 401, 403, 404, 413, 429, 503) },
}

export const partnerCrmSchema = {
  operationId: 'pushHighLevelContact',
  tags: ['contacts'],
  summary: 'Partner CRM contact webhook (queued, upserted asynchronously)',
  description:
    "The native webhook of the partner CRM platform. The subdomain selects the account; the body's location must be an active location of its partner CRM connection. The token is compared against the location's stored hash. Until the tokenized-URL cutover a call without any token is accepted (and flagged); after it, 401. " +
    'A missing connection or location answers exactly like an unknown subdomain (404). Body cap 8388608 bytes. Rate limit: 120 per 60 s and 50,000 per 24 h per location.',
  security: SECURITY.partnerCrm,
  querystring: TokenQuery,
  body: PartnerCrmContactBody,
  response: { 202: PushAccepted, ...errorResponses(400, 401, 404, 413, 429, 503) },
}

export const bySourceSchema = {
  operationId: 'pushContactsBySource',
  tags: ['contacts'],
  summary: 'Per-source inbound webhook (queued, upserted asynchronously)',
  description: `For automation platforms and custom scripts. The per-source token (header \`x-webhook-token\`, else query \`token\`) is compared in constant time against the stored hash; each record is mapped through this source's field mappings. ${LIMITS} per source.`,
  security: SECURITY.sourceToken,
  params: SourceIdParams,
  querystring: TokenQuery,
  body: ContactsPushBodyDocumented,
  response: { 202: PushAccepted, ...errorResponses(400, 401, 403, 404, 413, 429, 503) },
}

/** the router refuses a parameter over 100 characters with its own 414: longer ids reach this one */
export const bySourceWildcardSchema = { hide: true, params: WildcardParams }
