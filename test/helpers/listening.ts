import { existsSync, readFileSync } from 'node:fs'

/**
 * The local addresses (hex, as the kernel writes them: `0100007F` is 127.0.0.1, `00000000`
 * every interface) of the sockets listening on `port`, from the kernel's socket table
 * (/proc/net/tcp, tcp6): a test learns where a service listens without connecting anywhere.
 */
export function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  const out: string[] = []
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/)
      // state 0A: LISTEN
      if (local?.endsWith(`:${hexPort}`) && state === '0A') out.push(local.slice(0, local.lastIndexOf(':')))
    }
  }
  return out
}
