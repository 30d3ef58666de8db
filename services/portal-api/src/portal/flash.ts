/**
 * Flash messages after a redirect (post/redirect/get). The redirect carries a code from this
 * list in `?flash=`, never free text: a URL cannot put words on the tenant's screen, and no
 * value (let alone a secret) travels in it. Unknown codes show nothing.
 */
const FLASHES: Record<string, string> = {
  'connection-created': 'Connection created.',
  'connection-updated': 'Connection updated.',
  'key-revoked': 'API key revoked.',
  'key-revoke-scheduled': 'API key will stop working at the end of its grace period.',
  'mappings-saved': 'Field mappings saved.',
  'location-added': 'Location added.',
  'location-removed': 'Location removed.',
  'require-token-on': 'Token now required: pushes without a location token are refused.',
  'require-token-off': 'Token no longer required.',
  'domains-saved': 'Authorized domains saved.',
  'branding-saved': 'Branding saved.',
  'logo-saved': 'Logo saved.',
  'logo-removed': 'Logo removed.',
  'custom-field-created': 'Custom field created.',
  'integration-created': 'Webhook created.',
  'integration-updated': 'Webhook updated.',
  'integration-deleted': 'Webhook deleted.',
  'delivery-replayed': 'Delivery queued again.',
  'test-sent': 'Test event queued.',
  'link-minted': 'Tracked link created.',
}

/** Other screens add theirs here (one list, so codes stay unique). */
export function flashText(code: unknown): string | null {
  if (typeof code !== 'string') return null
  return Object.hasOwn(FLASHES, code) ? FLASHES[code]! : null
}
