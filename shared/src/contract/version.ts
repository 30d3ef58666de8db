/** The dated contract version (contract section 9). */
export const CONTRACT_VERSION = '2026-09-04' as const
