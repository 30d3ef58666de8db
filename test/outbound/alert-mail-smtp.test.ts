import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { loadConfig } from '@lsv/shared/config/config.ts'
import { createAlertMail } from '@lsv/shared/adapters/mail/alert-mail.ts'

/**
 * The alert mail's SMTP path (ALERT_EMAIL=smtp), against a small SMTP relay on 127.0.0.1 that
 * speaks just enough of RFC 5321 (EHLO, AUTH PLAIN, MAIL, RCPT, DATA) to record what nodemailer
 * hands over: the relay's URL gives host, port and credentials (percent-escapes decoded), and a
 * relay that never greets makes the send fail instead of hanging the task that sends it.
 */
interface Received {
  auth: string | null
  from: string
  to: string[]
  data: string
}

function startRelay(greet = true) {
  const received: Received[] = []
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    if (!greet) return
    let buffer = ''
    let inData = false
    let current: Received = { auth: null, from: '', to: [], data: '' }
    socket.write('220 relay.test ESMTP\r\n')
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8')
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        if (inData) {
          if (line === '.') {
            inData = false
            received.push(current)
            current = { auth: current.auth, from: '', to: [], data: '' }
            socket.write('250 queued\r\n')
          } else current.data += `${line.startsWith('..') ? line.slice(1) : line}\n`
          continue
        }
        const verb = line.split(' ')[0]!.toUpperCase()
        if (verb === 'EHLO') socket.write('250-relay.test\r\n250 AUTH PLAIN\r\n')
        else if (verb === 'AUTH') {
          current.auth = Buffer.from(line.split(' ')[2] ?? '', 'base64').toString('utf8')
          socket.write('235 ok\r\n')
        } else if (verb === 'MAIL') {
          current.from = line
          socket.write('250 ok\r\n')
        } else if (verb === 'RCPT') {
          current.to.push(line)
          socket.write('250 ok\r\n')
        } else if (verb === 'DATA') {
          inData = true
          socket.write('354 go on\r\n')
        } else if (verb === 'QUIT') socket.end('221 bye\r\n')
        else socket.write('250 ok\r\n')
      }
    })
  })
  return {
    received,
    listen: () => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

const logger = pino({ level: 'silent' })
const message = { to: 'ops@example.com', subject: 'Webhook endpoint CRM is failing', text: 'Your webhook endpoint CRM is failing.\n', alertId: 'alrt_smtp_1' }

describe('alert emails through an SMTP relay', () => {
  const relay = startRelay()
  let port = 0
  beforeAll(async () => {
    port = await relay.listen()
  })
  afterAll(async () => {
    await relay.close()
  })

  it('hands the message to the relay of ALERT_SMTP_URL, with its credentials, from ALERT_EMAIL_FROM', async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      ALERT_EMAIL: 'smtp',
      ALERT_SMTP_URL: `smtp://apikey:s3cr%40t@127.0.0.1:${port}`,
      ALERT_EMAIL_FROM: 'alerts@example.com',
    })
    const mail = createAlertMail(config, { logger })
    try {
      expect(mail.enabled).toBe(true)
      await mail.send(message)
    } finally {
      await mail.close()
    }
    expect(relay.received).toHaveLength(1)
    const [got] = relay.received
    // AUTH PLAIN: authzid NUL user NUL password, the URL's percent-escape decoded
    expect(got!.auth).toBe('\u0000apikey\u0000s3cr@t')
    expect(got!.from).toContain('<alerts@example.com>')
    expect(got!.to).toEqual([expect.stringContaining('<ops@example.com>')])
    expect(got!.data).toContain('Subject: Webhook endpoint CRM is failing')
    expect(got!.data).toMatch(/^X-Alert-Id: alrt_smtp_1$/im)
  })

  it('a relay that never greets: the send fails (the caller logs it) instead of waiting for ever', async () => {
    const silent = startRelay(false)
    const silentPort = await silent.listen()
    const config = loadConfig({ NODE_ENV: 'test', ALERT_EMAIL: 'smtp', ALERT_SMTP_URL: `smtp://127.0.0.1:${silentPort}` })
    const mail = createAlertMail(config, { logger })
    try {
      await expect(mail.send(message)).rejects.toThrow(/Greeting never received|timeout/i)
    } finally {
      await mail.close()
      await silent.close()
    }
  }, 30_000)
})
