/**
 * The operator CLI over the management API: `npm run cli -- <resource> <verb> [args] [options]`
 * (`--help` at every level; docs/management-api.md). PORTAL_URL and OPERATOR_TOKEN from the
 * environment, or --portal / --token.
 */
import { main } from './cli/main.ts'

const code = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
})
process.exitCode = code
