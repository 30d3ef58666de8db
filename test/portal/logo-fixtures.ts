import { deflateSync } from 'node:zlib'

/**
 * Logo images for the logo tests (docs/portal.md, "Branding"). The JPEG and the extended WebP are
 * Chromium's own encodings of a 48×24 canvas (canvas.toDataURL, printed once and pasted here);
 * the 1×1 lossy and lossless WebPs and the GIF are the well-known minimal files (each decoded by
 * Chromium when they were added). PNGs are built here, so a test can pick their size.
 */

const b64 = (parts: string[]) => Buffer.from(parts.join(''), 'base64')

/** 48×24 baseline JPEG (with an ICC profile, so the frame header is not in the first segment) */
export const JPEG_48x24 = b64([
  '/9j/4AAQSkZJRgABAQAAAQABAAD/4gHYSUNDX1BST0ZJTEUAAQEAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABh',
  'Y3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  'AAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAAB',
  'UAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAA',
  'AAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9Y',
  'WVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAM',
  'ZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADb/2wBDAA0JCgsKCA0LCgsODg0PEyAVExISEyccHhcg',
  'LikxMC4pLSwzOko+MzZGNywtQFdBRkxOUlNSMj5aYVpQYEpRUk//2wBDAQ4ODhMREyYVFSZPNS01T09PT09PT09PT09PT09PT09P',
  'T09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT0//wAARCAAYADADASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAAAAUH',
  '/8QAGhAAAQUBAAAAAAAAAAAAAAAAAAIFFlSj0f/EABcBAQEBAQAAAAAAAAAAAAAAAAQCBQP/xAAlEQABBAECBQUAAAAAAAAAAAAC',
  'AAEDEQQSURMUMTJBFVKBkfD/2gAMAwEAAhEDEQA/AJpYi71S1R0jmwGZjwjJdrby8goa0+Vm8XeqWqOiLvVLVHTSAJ5QN3Q/UZdm',
  '/fKzeLvVLVHSObAY+GyIRjqkzEyCmvV4QsSh6u5I4AcBIh6OlEAn3NaSh6u5I4JQ9XckcAK4p7up4EXtb6SUPV3JHCOASREXV1Qg',
  'IdrUv//Z',
])

/** 48×24 WebP, extended format (VP8X chunk first) */
export const WEBP_48x24 = b64([
  'UklGRoACAABXRUJQVlA4WAoAAAAgAAAALwAAFwAASUNDUMgBAAAAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABh',
  'Y3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  'AAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAAB',
  'UAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAA',
  'AAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9Y',
  'WVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAM',
  'ZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADZWUDggkgAAADAHAJ0BKjAAGAA+tUahSacjo6EwFV1Q',
  '4BaJaADBFYH4Aa7Py/8OZZn+kGGAfsB7/4FMsOTguq396NIyGlsRN7pdAAD+uJE96d/eTb4F11nfdK/csc0xl1nscEFoKUOOTfYV',
  'fsBLgDcgIMv6wHWPaZcijpmWv3kP/mjQT98dikKznKsqwT+sOpf0ulTbv6XIAAAA',
])

/** 1×1 lossy WebP (`VP8 ` chunk first) */
export const WEBP_LOSSY_1x1 = b64(['UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA'])
/** 1×1 lossless WebP (`VP8L` chunk first) */
export const WEBP_LOSSLESS_1x1 = b64(['UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=='])
/** 1×1 GIF: a real image, of a format the portal refuses */
export const GIF_1x1 = b64(['R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'])

/** An SVG with a script: what the portal must never serve from its origin */
export const SVG_WITH_SCRIPT = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>')

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

function crc32(bytes: Buffer): number {
  let c = 0xffffffff
  for (const byte of bytes) {
    c ^= byte
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  }
  return (c ^ 0xffffffff) >>> 0
}

/** A valid RGB PNG of one colour (`#rrggbb`), `width`×`height` pixels. */
export function solidPng(width: number, height: number, colour = '#2f6fd6'): Buffer {
  const rgb = [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16))
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 2, 0, 0, 0], 8) // 8 bits, RGB, deflate, no filter, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())])
  const raw = Buffer.concat(Array.from({ length: height }, () => row))
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}

/** A valid PNG padded after its end to exactly `size` bytes (decoders ignore what follows IEND). */
export function pngOfSize(size: number): Buffer {
  const png = solidPng(4, 4)
  return Buffer.concat([png, Buffer.alloc(size - png.length)])
}
