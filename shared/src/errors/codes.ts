/**
 * The one place that maps error codes to HTTP statuses and the contract's `error` texts.
 * Texts marked "contract" are binding to the letter (contract-2026-09-04 sections 4 and 7);
 * the others are our own design for cases the contract does not show (see docs/errors.md).
 */
export const ERROR_CODES = {
  invalid_json: { status: 400, message: 'invalid JSON body' }, // contract
  invalid_payload: { status: 400, message: 'invalid payload' }, // contract
  invalid_destination_url: { status: 400, message: 'invalid destination URL' }, // contract
  destination_not_authorized: { status: 400, message: 'destination host is not authorized' }, // contract
  invalid_include: { status: 400, message: 'invalid include' }, // read contract, section 4.7/7.7
  invalid_cursor: { status: 400, message: 'invalid cursor' },
  bad_request: { status: 400, message: 'bad request' }, // a message node cannot parse as HTTP/1.1
  unauthorized: { status: 401, message: 'unauthorized' }, // contract
  forbidden: { status: 403, message: 'forbidden' }, // contract
  not_found: { status: 404, message: 'not found' }, // contract
  contact_not_found: { status: 404, message: 'contact not found' }, // contract
  method_not_allowed: { status: 405, message: 'method not allowed' },
  request_timeout: { status: 408, message: 'request timeout' }, // headers or body too slow (shared/src/http/timeouts.ts)
  conflict: { status: 409, message: 'conflict' },
  public_id_taken: { status: 409, message: 'public_id taken' }, // management API spec
  gone: { status: 410, message: 'gone' },
  too_many_contacts: { status: 413, message: 'too many contacts' }, // contract
  payload_too_large: { status: 413, message: 'payload too large' }, // contract
  unsupported_media_type: { status: 415, message: 'unsupported media type' },
  rate_limited: { status: 429, message: 'rate limited' }, // contract
  headers_too_large: { status: 431, message: 'request header fields too large' },
  internal: { status: 500, message: 'internal error' },
  mint_failed: { status: 500, message: 'mint failed' }, // contract
  temporarily_unavailable: { status: 503, message: 'temporarily unavailable' }, // contract
  signed_links_unavailable: { status: 503, message: 'signed links unavailable' }, // contract
} as const satisfies Record<string, { status: number; message: string }>

export type ErrorCode = keyof typeof ERROR_CODES
