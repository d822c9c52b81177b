// The acceptance-gate driver: runs every protocol-v4 vector as real sessions against the broker
// listening on a socket (whoever owns it), using the installed package's corpus. Prints the
// normalized results as JSON; appends every frame it receives to a log (for the scope scan).
//
//   node drive.mjs <socket> <frames.log>
import net from 'node:net'
import { appendFileSync } from 'node:fs'
import { INTERCOM_PROTOCOL_V4_VECTORS as VECTORS } from '@ctliz/agent-intercom-core/protocol-v4'

const [socketPath, framesLog] = process.argv.slice(2)
const scopesUsed = new Set()

class Raw {
  constructor () {
    this.frames = []
    this.waiters = []
    this.closed = false
    this.buffer = Buffer.alloc(0)
    this.socket = net.connect(socketPath)
    this.socket.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      while (this.buffer.length >= 4 && this.buffer.length >= 4 + this.buffer.readUInt32BE(0)) {
        const size = this.buffer.readUInt32BE(0)
        const text = this.buffer.toString('utf8', 4, 4 + size)
        appendFileSync(framesLog, text + '\n')
        this.frames.push(JSON.parse(text))
        this.buffer = this.buffer.subarray(4 + size)
      }
      for (const w of this.waiters.splice(0)) w()
    })
    this.socket.on('close', () => { this.closed = true; for (const w of this.waiters.splice(0)) w() })
    this.socket.on('error', () => {})
  }

  send (frame) {
    const body = Buffer.from(JSON.stringify(frame))
    const header = Buffer.alloc(4)
    header.writeUInt32BE(body.length)
    this.socket.write(Buffer.concat([header, body]))
  }

  async next (pred = () => true, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const at = this.frames.findIndex(pred)
      if (at >= 0) return this.frames.splice(at, 1)[0]
      if (this.closed || Date.now() > deadline) return null
      await new Promise((resolve) => { this.waiters.push(resolve); setTimeout(resolve, 50) })
    }
  }

  /** Everything received until a list round trip completes (the broker answers in order). */
  async fence () {
    const requestId = `fence-${Math.random()}`
    this.send({ type: 'list', requestId })
    await this.next((f) => f.type === 'sessions' && f.requestId === requestId)
    return this.frames.splice(0)
  }

  async selfFence () {
    const requestId = `health-${Math.random()}`
    this.send({ type: 'health', requestId })
    await this.next((f) => f.type === 'health_ok' && f.requestId === requestId)
  }
}

async function runVector (v, index) {
  const tag = `v${String(index).padStart(2, '0')}`
  const scope = (s) => { if (s === null || s === undefined) return null; const m = `${s}_${tag}`; scopesUsed.add(m); return m }
  const id = (x) => `${x}-${tag}`
  const unid = (x) => x.replace(`-${tag}`, '')
  const clients = new Map()
  const join = async (cid, name, sc, runtime = `rt-${cid}`) => {
    const c = new Raw()
    const session = { cwd: '/gate', model: 'gate', pid: process.pid, startedAt: 1, lastActivity: 1, runtimeInstanceId: runtime }
    if (name !== undefined && name !== null) session.name = name
    const frame = { type: 'register', protocol: 'pi-intercom', version: 4, sessionId: id(cid), session }
    const mapped = scope(sc)
    if (mapped) frame.scopeId = mapped
    c.send(frame)
    const reply = await c.next((f) => f.type === 'registered' || f.type === 'error')
    if (reply?.type !== 'registered') throw new Error(`${v.name}: registration failed ${JSON.stringify(reply)}`)
    clients.set(cid, c)
    return c
  }
  const joinAll = async (skip) => { for (const c of v.candidates ?? []) if (c.id !== skip) await join(c.id, c.name, c.scope) }
  const fenceAll = async () => { const out = new Map(); for (const [cid, c] of clients) out.set(cid, await c.fence()); return out }
  const heard = (frames, type, about) => [...frames].filter(([, fs]) => fs.some((f) => f.type === type && (f.sessionId === id(about) || f.session?.id === id(about)))).map(([cid]) => cid).sort()
  const selector = (sel) => (v.candidates ?? []).some((c) => c.id === sel) || sel === v.subjectId || sel === v.actorId ? id(sel) : sel
  const deliver = async (from, sel, messageId, extra = {}) => {
    const sender = clients.get(from)
    sender.send({ type: 'send', to: selector(sel), message: { id: messageId, timestamp: 1, content: { text: 'gate' }, ...extra } })
    const first = await sender.next((f) => (f.type === 'delivery_accepted' || f.type === 'delivery_failed') && f.messageId === messageId)
    if (first.type === 'delivery_failed') return { failed: first.code }
    for (const [cid, frames] of await fenceAll()) {
      const m = frames.find((f) => f.type === 'message' && f.deliveryId === first.deliveryId)
      if (m) {
        clients.get(cid).send({ type: 'message_received', deliveryId: m.deliveryId })
        await sender.next((f) => f.type === 'delivered' && f.messageId === messageId)
        return { to: cid, replyTo: m.message.replyTo ?? null }
      }
    }
    return { lost: true }
  }
  let observed
  try {
    switch (v.operation) {
      case 'validate_scope': {
        const c = new Raw()
        const frame = { type: 'register', protocol: 'pi-intercom', version: 4, sessionId: id('scope-check'), session: { cwd: '/gate', model: 'gate', pid: 1, startedAt: 1, lastActivity: 1 } }
        if (Object.hasOwn(v, 'scopeInput')) {
          frame.scopeId = v.scopeInput
          if (typeof v.scopeInput === 'string' && v.scopeInput) scopesUsed.add(v.scopeInput)
        }
        c.send(frame)
        const r = await c.next((f) => f.type === 'registered' || f.type === 'error')
        clients.set('scope-check', c)
        observed = r.type === 'registered' ? (frame.scopeId ? 'valid_scoped' : 'valid_unscoped') : r.code === 'INVALID_REQUEST' ? 'invalid_scope' : r.code
        break
      }
      case 'list': {
        await joinAll()
        const me = clients.get(v.actorId)
        me.send({ type: 'list', requestId: 'q' })
        observed = (await me.next((f) => f.type === 'sessions' && f.requestId === 'q')).sessions.map((s) => unid(s.id))
        break
      }
      case 'session_joined':
        await joinAll(v.subjectId)
        await fenceAll()
        await join(v.subjectId, v.candidates.find((c) => c.id === v.subjectId)?.name, v.subjectScope)
        observed = heard(await fenceAll(), 'session_joined', v.subjectId)
        break
      case 'session_left': {
        await joinAll()
        await fenceAll()
        const subject = clients.get(v.subjectId)
        subject.send({ type: 'unregister' })
        await subject.selfFence()
        clients.delete(v.subjectId)
        subject.socket.destroy()
        observed = heard(await fenceAll(), 'session_left', v.subjectId)
        break
      }
      case 'presence_update': {
        await joinAll()
        await fenceAll()
        const subject = clients.get(v.subjectId)
        subject.send({ type: 'presence', status: 'gate' })
        await subject.selfFence()
        observed = heard(await fenceAll(), 'presence_update', v.subjectId)
        break
      }
      case 'resolve':
      case 'send': {
        await joinAll()
        await fenceAll()
        const r = await deliver(v.actorId, v.selector, 'm1')
        observed = r.failed ?? r.to
        break
      }
      case 'ask':
        await joinAll()
        observed = [await deliver(v.actorId, v.selector, 'q1', { expectsReply: true }), await deliver(v.actorId, v.selector, 'q2', { expectsReply: true })]
        break
      case 'reply':
        await joinAll()
        observed = [await deliver(v.subjectId, v.actorId, 'q1', { expectsReply: true }), await deliver(v.actorId, v.selector, 'r1', { replyTo: 'q1' }), await deliver(v.actorId, v.selector, 'r2', { replyTo: 'q1' })]
        break
      case 'cancel_ask':
      case 'defer_ask': {
        await joinAll()
        const asked = await deliver(v.actorId, v.selector, 'q1', { expectsReply: true })
        const actor = clients.get(v.actorId)
        actor.send({ type: v.operation, requestId: 'c', messageId: 'q1' })
        const result = await actor.next((f) => f.type === 'ask_control_result')
        const note = await clients.get(v.subjectId).next((f) => f.type === 'ask_cancelled' || f.type === 'ask_deferred')
        observed = [asked, result.applied, note.type, unid(note.fromSessionId)]
        break
      }
      case 'replace':
      case 'late_frame': {
        await joinAll()
        if (!clients.has(v.actorId)) await join(v.actorId, 'mover', v.actorScope, `rt-${v.actorId}`)
        if (v.subjectId !== v.actorId && !clients.has(v.subjectId)) await join(v.subjectId, 'target', v.subjectScope)
        await join('watcher-old', 'watcher-old', v.actorScope)
        if (v.actorScope !== v.subjectScope) await join('watcher-new', 'watcher-new', v.subjectScope)
        await fenceAll()
        const old = clients.get(v.actorId)
        clients.delete(v.actorId)
        const moveTo = v.subjectId === v.actorId ? v.subjectScope : v.actorScope
        await join(`${v.actorId}`, 'moved', moveTo, `rt-${v.actorId}`)
        const frames = await fenceAll()
        if (v.operation === 'replace') {
          const events = []
          for (const [, fs] of frames) {
            for (const f of fs) {
              if (f.type === 'session_left' && f.sessionId === id(v.actorId)) events.push('left')
              if (f.type === 'session_joined' && f.session?.id === id(v.actorId)) events.push('joined')
            }
          }
          observed = [...new Set(events)].sort()
        } else {
          old.send({ type: 'list', requestId: 'late' })
          const lateAnswer = await old.next((f) => f.type === 'sessions', 500)
          const after = await fenceAll()
          observed = { answered: Boolean(lateAnswer), emitted: [...after.values()].reduce((n, fs) => n + fs.length, 0) }
        }
        old.socket.destroy()
        break
      }
      default:
        observed = `unknown operation ${v.operation}`
    }
  } finally {
    for (const c of clients.values()) {
      if (!c.closed) c.send({ type: 'unregister' })
      c.socket.destroy()
    }
  }
  return { name: v.name, operation: v.operation, observed, pass: check(v, observed) }
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)

/** Whether what the live broker did is what the vector expects. */
function check (v, o) {
  switch (v.operation) {
    case 'validate_scope': return o === v.expected
    case 'list': return same(o, v.expectedTargetIds)
    case 'session_joined': case 'session_left': case 'presence_update': return same(o, [...v.expectedAudienceIds].sort())
    case 'resolve': case 'send':
      return ['AMBIGUOUS_TARGET', 'SESSION_NOT_FOUND'].includes(v.expected) ? o === v.expected : o === v.expectedTargetIds[0]
    case 'ask': return o[0].to === v.subjectId && o[1].failed === 'ASK_ALREADY_PENDING'
    case 'reply': return o[0].to === v.actorId && o[1].to === v.subjectId && o[1].replyTo === 'q1' && o[2].failed === 'INVALID_REPLY_TARGET'
    case 'cancel_ask': case 'defer_ask':
      return o[0].to === v.subjectId && o[1] === true && o[2] === (v.operation === 'cancel_ask' ? 'ask_cancelled' : 'ask_deferred') && o[3] === v.actorId
    case 'replace': return same(o, ['joined', 'left'])
    case 'late_frame': return o.answered === false && o.emitted === 0
    default: return false
  }
}

const results = []
for (const [i, v] of VECTORS.entries()) results.push(await runVector(v, i))
console.log(JSON.stringify({ vectors: results.length, results, scopesUsed: [...scopesUsed].sort() }))
