/**
 * `npm start` loads this with `node --import` so OpenTelemetry is running before the local stack
 * imports fastify, undici and the Google clients (platform/telemetry.ts; a deployed service's
 * server.ts does the same itself). Worker threads inherit `--import`: a background thread starts
 * its own SDK, under its own name (platform/background-thread-entry.ts), so not here.
 */
import { isMainThread } from 'node:worker_threads'
import { startTelemetry } from '@lsv/shared/platform/telemetry.ts'

if (isMainThread) await startTelemetry('local-stack')
