/**
 * Connection timeouts of every service (docs/errors.md, "Answers from the HTTP layer"). In
 * production the only peer is Google's front end (the load balancer, then Cloud Run's proxy);
 * locally and in tests a client connects directly, so these are also what stops a slow or idle
 * client from holding a socket.
 *
 * - headersTimeout 20 s: the request line and headers must arrive within 20 s of the first
 *   byte (a front end sends them at once; a client dripping header bytes is cut off with 408).
 * - requestTimeout 120 s: the whole request, body included, within 120 s: an 8 MiB body (the
 *   contract's cap) needs about 560 kbit/s. A client dripping body bytes is cut off with 408.
 *   (Cloud Run's own request timeout, infra/cloud-run.tf, bounds request and answer together.)
 * - keepAliveTimeout 620 s: an idle keep-alive connection stays open longer than the 600 s
 *   Google's load balancer keeps idle backend connections, so the server never closes one that
 *   the front end is about to reuse (that race surfaces as 502s).
 * - connectionsCheckingInterval 5 s: how often node checks the two request timeouts (its
 *   default, 30 s, would let a drip run 30 s past them).
 * - connectionTimeout 0 (no socket inactivity timeout): the receiving side is bounded by the
 *   two request timeouts and the idle side by keepAliveTimeout; node applies the inactivity
 *   timeout only until a connection's first keep-alive pause, and would cut a slow handler.
 * - maxHeaderSize 16 KiB (node's default): larger headers answer 431.
 */
export interface HttpTimeouts {
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
  connectionsCheckingIntervalMs: number
  maxHeaderSize: number
}

export const HTTP_TIMEOUTS: HttpTimeouts = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 620_000,
  connectionsCheckingIntervalMs: 5_000,
  maxHeaderSize: 16 * 1024,
}
