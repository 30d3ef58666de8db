/**
 * `export`: all contacts of one account (or of every account) as newline-delimited JSON in the
 * BigQuery load format, one `toLoadRow` row per contact (TIMESTAMP columns as ISO-8601 strings,
 * the form a load job reads), matching
 * infra/bigquery/contact_changes.schema.json:
 *
 *   node scripts/cli/export.ts --account acme --out acme.ndjson
 *   bq load --source_format=NEWLINE_DELIMITED_JSON lsv_contacts.contact_changes acme.ndjson \
 *     infra/bigquery/contact_changes.schema.json
 *
 * Streaming: contacts are read in keyset pages, one chunk of rows per page, and stream.pipeline
 * writes them: it waits for the output to drain (backpressure), and an error on either side (a
 * store read, EPIPE on a closed pipe, a full disk) stops the other and rejects. Memory stays
 * constant whatever the account size.
 */
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import type { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import pino from 'pino'
import { ConfigError, loadConfig } from '@lsv/shared/config/config.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { createPlatformDeps } from '@lsv/shared/platform/deps.ts'
import { toLoadRow } from '@lsv/shared/domain/contacts/change-row.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'

export const EXPORT_HELP = `Usage: export (--account <id|public_id> | --all) [--out <file>] [--page-size <n>]

Writes every contact of the account (or of all accounts) as newline-delimited JSON, one
BigQuery row per contact (schema: infra/bigquery/contact_changes.schema.json), to <file> or
stdout. Progress goes to stderr when it is a terminal; a summary is printed at the end.
Environment as for the services (DATA_DIR, STORE_BACKEND, GOOGLE_CLOUD_PROJECT, ...).

Load it:
  bq load --source_format=NEWLINE_DELIMITED_JSON lsv_contacts.contact_changes <file> \\
    infra/bigquery/contact_changes.schema.json
`

export interface ExportIo {
  /** platform deps to read from; default: built from process.env (closed at the end) */
  deps?: PlatformDeps
  /** where rows go without --out; default process.stdout */
  stdout?: Writable
  /** progress and summary; default process.stderr (progress only when it is a TTY) */
  stderr?: Writable & { isTTY?: boolean }
}

export interface ExportSummary {
  accounts: number
  contacts: number
  bytes: number
}

const ACCOUNT_PAGE = 100

async function* accountsToExport(deps: PlatformDeps, account: string | undefined): AsyncGenerator<AccountRecord> {
  if (account !== undefined) {
    const found = (await deps.tenants.getAccount(account)) ?? (await deps.tenants.getAccountByPublicId(account))
    if (!found) throw new UsageError(`account not found: ${account}`)
    yield found
    return
  }
  let after: string | undefined
  for (;;) {
    const page = await deps.tenants.listAccounts({ after, limit: ACCOUNT_PAGE })
    for (const a of page) yield a
    if (page.length < ACCOUNT_PAGE) return
    after = page[page.length - 1]!.id
  }
}

class UsageError extends Error {}

interface ExportOptions {
  account?: string
  pageSize: number
  onProgress?: (s: ExportSummary, account: AccountRecord) => void
  /** end `out` when done and wait until it has flushed (a file); default false (stdout is not ours to end) */
  end?: boolean
}

/** The rows of the selected accounts, one chunk per page of contacts, counted into `summary` as they are read. */
async function* rowChunks(deps: PlatformDeps, options: ExportOptions, summary: ExportSummary): AsyncGenerator<string> {
  for await (const account of accountsToExport(deps, options.account)) {
    summary.accounts++
    let after: string | undefined
    for (;;) {
      const page = await deps.contacts.list(account.id, { after, limit: options.pageSize })
      if (page.length === 0) break
      // changed_at = updated_at: the row describes the state as of its last change, so a loaded
      // export never looks newer than a change streamed after the snapshot was read
      let chunk = ''
      for (const record of page) chunk += `${JSON.stringify(toLoadRow(record, record.updated_at))}\n`
      summary.contacts += page.length
      summary.bytes += Buffer.byteLength(chunk)
      yield chunk
      options.onProgress?.(summary, account)
      if (page.length < options.pageSize) break
      after = page[page.length - 1]!.id
    }
  }
}

/** The streaming core: rows of the selected accounts to `out`. */
export async function exportContacts(deps: PlatformDeps, out: Writable, options: ExportOptions): Promise<ExportSummary> {
  const summary: ExportSummary = { accounts: 0, contacts: 0, bytes: 0 }
  await pipeline(rowChunks(deps, options, summary), out, { end: options.end ?? false })
  return summary
}

function parse(argv: string[]): { account?: string; all: boolean; out?: string; pageSize: number; help: boolean } {
  const { values } = parseArgs({
    args: argv,
    options: {
      account: { type: 'string' },
      all: { type: 'boolean', default: false },
      out: { type: 'string', short: 'o' },
      'page-size': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  })
  const pageSize = values['page-size'] === undefined ? 500 : Number(values['page-size'])
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 10_000) throw new UsageError('--page-size must be an integer 1..10000')
  if (!values.help && (values.account === undefined) === !values.all) throw new UsageError('give exactly one of --account <id> or --all')
  if (values.account === '') throw new UsageError('--account needs a value')
  return { account: values.account, all: values.all ?? false, out: values.out, pageSize, help: values.help ?? false }
}

/** CLI entry point: exit code 0 on success, 2 on a usage error, 1 on any other failure. */
export async function runExport(argv: string[], io: ExportIo = {}): Promise<number> {
  const stderr = io.stderr ?? process.stderr
  let args: ReturnType<typeof parse>
  try {
    args = parse(argv)
  } catch (err) {
    stderr.write(`export: ${(err as Error).message}\n\n${EXPORT_HELP}`)
    return 2
  }
  if (args.help) {
    ;(io.stdout ?? process.stdout).write(EXPORT_HELP)
    return 0
  }

  let deps = io.deps
  let ownDeps = false
  let out: Writable | undefined
  const tty = stderr.isTTY === true
  const started = Date.now()
  try {
    if (!deps) {
      const config = loadConfig(process.env)
      // logs go to stderr so they never mix into NDJSON on stdout
      deps = await createPlatformDeps(config, pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel }, pino.destination(2)))
      ownDeps = true
    }
    if (args.out !== undefined) {
      const file = createWriteStream(args.out)
      out = file
      await once(file, 'ready') // rejects with the open error (missing folder, permissions)
    } else {
      out = io.stdout ?? process.stdout
    }
    let lastProgress = 0
    const summary = await exportContacts(deps, out, {
      account: args.account,
      pageSize: args.pageSize,
      end: args.out !== undefined,
      onProgress: tty
        ? (s, account) => {
            const now = Date.now()
            if (now - lastProgress < 200) return
            lastProgress = now
            // the total is unknown without a count query, so: running totals and the rate
            const rate = Math.round(s.contacts / Math.max(0.001, (now - started) / 1000))
            stderr.write(`\r\x1b[2Kexporting ${account.public_id} (account ${s.accounts}): ${s.contacts} contacts, ${(s.bytes / 1e6).toFixed(1)} MB, ${rate}/s`)
          }
        : undefined,
    })
    if (tty) stderr.write('\r\x1b[2K')
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    stderr.write(
      `exported ${summary.contacts} contact(s) of ${summary.accounts} account(s), ${summary.bytes} bytes, to ${args.out ?? 'stdout'} in ${seconds} s\n`,
    )
    return 0
  } catch (err) {
    if (tty) stderr.write('\n')
    if (err instanceof UsageError || err instanceof ConfigError) {
      stderr.write(`export: ${err.message}\n`)
      return 2
    }
    stderr.write(`export failed: ${(err as Error).stack ?? String(err)}\n`)
    if (args.out !== undefined && out) out.destroy()
    return 1
  } finally {
    if (ownDeps) await deps?.close()
  }
}

if (import.meta.main) {
  process.exitCode = await runExport(process.argv.slice(2))
}
