import { isLoopbackAddress } from '@lsv/shared/config/loopback.ts'

/**
 * What `npm start` and `npm run start:cloud` print when LISTEN_HOST opens them beyond this
 * machine (issue 31): the local stack is not built for a network. Its answers travel in clear
 * (no TLS: the operator token, API keys and portal cookies too), and its internal routes (Pub/Sub
 * push, Cloud Tasks) admit loopback callers. Null when the address is loopback.
 */
export function openListenWarning(host: string): string | null {
  if (isLoopbackAddress(host)) return null
  return [
    `WARNING: LISTEN_HOST=${host} opens the local stack beyond this machine.`,
    '  It has no TLS: tokens, API keys and portal cookies cross the network in clear.',
    '  Its internal routes trust loopback callers, and its management API answers the operator token in .data.',
    '  Use it on a network you trust only; unset LISTEN_HOST to listen on 127.0.0.1.',
    '',
  ].join('\n')
}
