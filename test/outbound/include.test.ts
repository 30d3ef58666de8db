import { describe, expect, it } from 'vitest'
import { parseInclude } from '@lsv/shared/domain/contacts/include.ts'
import { decodeContactCursor, decodeKeysetCursor, encodeContactCursor, encodeKeysetCursor } from '@lsv/shared/domain/contacts/cursor.ts'

describe('read contract: include', () => {
  it.each([
    [undefined, { contactHandles: false, sensitiveTraits: false }],
    ['contact_handles', { contactHandles: true, sensitiveTraits: false }],
    ['sensitive_traits', { contactHandles: false, sensitiveTraits: true }],
    ['contact_handles,sensitive_traits', { contactHandles: true, sensitiveTraits: true }],
    ['sensitive_traits, contact_handles', { contactHandles: true, sensitiveTraits: true }],
  ])('accepts %s', (raw, expected) => {
    expect(parseInclude(raw)).toEqual(expected)
  })

  it.each(['custom_fields', 'contact_handles,custom_fields', 'traits', '', ',', 'contact_handles,', 'Contact_Handles', 'handles'])(
    'refuses %j with invalid include',
    (raw) => {
      expect(() => parseInclude(raw)).toThrow(expect.objectContaining({ code: 'invalid_include', status: 400, message: 'invalid include' }))
    },
  )

  it('refuses a repeated parameter (an array)', () => {
    expect(() => parseInclude(['contact_handles', 'sensitive_traits'])).toThrow(expect.objectContaining({ code: 'invalid_include' }))
  })
})

describe('keyset cursors', () => {
  it('round-trip and stay opaque', () => {
    const id = '0190f3a2-1c2b-8d3e-9f40-123456789abc'
    const c = encodeContactCursor(id)
    expect(c).not.toContain(id)
    expect(decodeContactCursor(c)).toBe(id)
    expect(decodeContactCursor(undefined)).toBeUndefined()
  })

  it.each(['not base64!', 'Zm9v', encodeKeysetCursor('d1', 'x'), 'a'.repeat(500)])('refuses %s with invalid cursor', (c) => {
    expect(() => decodeContactCursor(c)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }))
  })

  it('a cursor of one list is refused by another', () => {
    expect(() => decodeKeysetCursor('d1', encodeContactCursor('x'))).toThrow(expect.objectContaining({ code: 'invalid_cursor' }))
  })
})
