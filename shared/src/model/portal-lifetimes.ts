/**
 * How long portal access lasts (management-api.md, "Portal access", rules 1 and 3).
 */

/** sign-in link lifetime bounds and default, seconds (`ttl_seconds`) */
export const LINK_TTL_MIN_SECONDS = 60
export const LINK_TTL_MAX_SECONDS = 3600
export const LINK_TTL_DEFAULT_SECONDS = 900

/** a session ends after 12 hours without use */
export const SESSION_IDLE_MS = 12 * 3600 * 1000
/** and 7 days after it began, used or not */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 3600 * 1000
/**
 * `last_used_at` is written at most once per this interval: a page load is several requests, and
 * each would otherwise be a write. The idle clock runs from the last write, so a session may end
 * up to this much earlier than 12 hours after its very last request, never later.
 */
export const SESSION_TOUCH_INTERVAL_MS = 60 * 1000
