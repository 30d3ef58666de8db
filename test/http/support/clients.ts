import { request } from 'node:http'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Agent, fetch } from 'undici'

/**
 * The HTTP clients callers actually use, each sending one request the way it always does:
 * node:http, fetch (undici), curl and Python's urllib (separate processes). Every function
 * resolves with what the client itself reported: the status and body it read, or the error it
 * raised instead (EPIPE, ECONNRESET, …). Nothing is retried.
 */
export interface ClientResult {
  status?: number
  text?: string
  error?: string
}

export interface Target {
  port: number
  /** Host header (the edge needs `<public_id>.<edge domain>`) */
  host: string
  path: string
  headers: Record<string, string>
}

export async function nodeHttpPost(target: Target, body: Buffer): Promise<ClientResult> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: target.path,
        method: 'POST',
        headers: { ...target.headers, host: target.host, 'content-length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }))
        res.on('error', (err) => resolve({ error: `response: ${(err as NodeJS.ErrnoException).code ?? err.message}` }))
      },
    )
    req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }))
    req.end(body)
  })
}

/** undici's fetch (what Node's global fetch is), with every host name resolved to loopback. */
const loopback = new Agent({
  connect: {
    lookup: ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) =>
      options?.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)) as never,
  },
})

export async function fetchPost(target: Target, body: Buffer): Promise<ClientResult> {
  try {
    const res = await fetch(`http://${target.host}:${target.port}${target.path}`, {
      method: 'POST',
      headers: target.headers,
      body,
      dispatcher: loopback,
    })
    return { status: res.status, text: await res.text() }
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } }
    return { error: e.cause?.code ?? e.cause?.message ?? e.message }
  }
}

export async function closeFetchAgent(): Promise<void> {
  await loopback.close()
}

function run(cmd: string, args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(stdin ?? '')
  })
}

/** curl, body from a file (`--data-binary @file`): one process per request. */
export async function curlPost(target: Target, bodyFile: string): Promise<ClientResult> {
  const headers = Object.entries({ ...target.headers, host: target.host }).flatMap(([k, v]) => ['-H', `${k}: ${v}`])
  const marker = '\n--status:'
  const { code, stdout, stderr } = await run('curl', [
    '-sS',
    '-X',
    'POST',
    ...headers,
    '--data-binary',
    `@${bodyFile}`,
    '-w',
    `${marker}%{http_code}`,
    `http://127.0.0.1:${target.port}${target.path}`,
  ])
  const at = stdout.lastIndexOf(marker)
  if (code !== 0 || at < 0) return { error: `curl exit ${code}: ${stderr.trim()}` }
  return { status: Number(stdout.slice(at + marker.length)), text: stdout.slice(0, at) }
}

const URLLIB = `
import json, sys, urllib.request, urllib.error
jobs = json.load(sys.stdin)
out = []
for job in jobs:
    body = open(job['file'], 'rb').read()
    req = urllib.request.Request(job['url'], data=body, method='POST', headers=job['headers'])
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            out.append({'status': res.status, 'text': res.read().decode()})
    except urllib.error.HTTPError as e:
        out.append({'status': e.code, 'text': e.read().decode()})
    except Exception as e:
        out.append({'error': type(e).__name__ + ': ' + str(e)})
print(json.dumps(out))
`

/** Python's urllib: one process sends every request in order (each on its own connection, as urllib does). */
export async function urllibPosts(jobs: Array<{ target: Target; bodyFile: string }>): Promise<ClientResult[]> {
  const input = JSON.stringify(
    jobs.map(({ target, bodyFile }) => ({
      url: `http://127.0.0.1:${target.port}${target.path}`,
      file: bodyFile,
      headers: { ...target.headers, Host: target.host },
    })),
  )
  const { code, stdout, stderr } = await run('python3', ['-c', URLLIB], input)
  if (code !== 0) throw new Error(`python3 failed (${code}): ${stderr}`)
  return JSON.parse(stdout) as ClientResult[]
}

const NODE_CLIENTS = fileURLToPath(new URL('./node-clients-cli.ts', import.meta.url))

/** node:http or fetch in a separate Node process, requests in order. */
export async function nodeClientPosts(client: 'http' | 'fetch', jobs: Array<{ target: Target; bodyFile: string }>): Promise<ClientResult[]> {
  const { code, stdout, stderr } = await run(process.execPath, [NODE_CLIENTS], JSON.stringify({ client, jobs }))
  if (code !== 0) throw new Error(`node clients failed (${code}): ${stderr}`)
  return JSON.parse(stdout) as ClientResult[]
}
