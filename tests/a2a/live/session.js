'use strict'
// A live session for the `serve --broker` tests: the Node package's broker client (connect() over
// the addon), driven by JSON lines on stdin and telling what happens as JSON lines on stdout.
//   stdin:  {"op":"register","sessionId":ID,"name":NAME}    registers (again) on a new connection
//           {"op":"reply","to":ID,"replyTo":MSG,"text":T,"attachments":[...],"queue":bool}
//           {"op":"close"}                                  closes the connection (away)
//   stdout: {"event":"registered","sessionId"} {"event":"message","from","message","deliveryId"}
//           {"event":"ask_cancelled",...} {"event":"ask_deferred",...} {"event":"replied","messageId"}
//           {"event":"closed"} {"event":"error","op","code","message"}
// argv: the agent directory. The client acknowledges every message (autoAck).
const { join } = require('node:path')
const readline = require('node:readline')

const root = join(__dirname, '..', '..', '..')
const { connect } = require(join(root, 'bindings-node', 'lib', 'broker.js'))
const agentDir = process.argv[2]

let client = null
const say = (event) => process.stdout.write(JSON.stringify(event) + '\n')

async function register ({ sessionId, name }) {
  if (client) client.close()
  client = await connect({ agentDir })
  const now = Date.now()
  const session = { cwd: process.cwd(), model: 'node-session', pid: process.pid, startedAt: now, lastActivity: now, name }
  for (const event of ['ask_cancelled', 'ask_deferred']) {
    client.on(event, (frame) => say({ ...frame, event }))
  }
  client.on('message', (m) => say({ event: 'message', from: m.from, message: m.message, deliveryId: m.deliveryId }))
  const registered = await client.register({ session, sessionId })
  say({ event: 'registered', sessionId: registered.sessionId })
}

async function reply ({ to, replyTo, text, attachments, queue }) {
  const content = attachments ? { text, attachments } : { text }
  const sent = await client.reply(to, replyTo, { content }, queue ? { queue: true } : undefined)
  say({ event: 'replied', messageId: sent.messageId, queued: Boolean(sent.queued) })
}

const ops = {
  register,
  reply,
  close: async () => {
    if (client) client.close()
    client = null
    say({ event: 'closed' })
  }
}

const lines = readline.createInterface({ input: process.stdin })
let chain = Promise.resolve()
lines.on('line', (line) => {
  const command = JSON.parse(line)
  chain = chain.then(() => ops[command.op](command)).catch((e) =>
    say({ event: 'error', op: command.op, code: e.code ?? 'UNKNOWN', message: String(e.message) }))
})
lines.on('close', () => chain.then(() => { if (client) client.close(); process.exit(0) }))
