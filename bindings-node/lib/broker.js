'use strict'
// @ctliz/agent-intercom-core/broker: run the Rust broker inside this process (startBroker), find
// or start it race-free (ensureBroker), and talk to it (connect -> IntercomClient). The client's
// rules (what a request may hold, how bytes become frames, what each answer of the broker means)
// are the Rust client's, agent_intercom_broker::client::rules, called through the addon
// (bindings-node/src/client.rs): C and Node answer every frame alike. This file keeps the
// sockets, timers and events.
const net = require('node:net')
const { EventEmitter } = require('node:events')
const { randomUUID } = require('node:crypto')
const { join, resolve, isAbsolute } = require('node:path')
const { homedir } = require('node:os')
const { addon, constants: C, fail, IntercomError } = require('./native.js')
const { DATA, FRAME, checkPlain, jsonText, optionsOf } = require('./plain.js')

// Names, levels and the health contract are the broker crate's (the addon's constants().broker).
const B = C.broker
const MAX_FRAME_BYTES = C.maxFrameBytes
const MAX_TIMER_MS = 2 ** 31 - 1 // setTimeout fires at once for anything longer
const ANSWER_TIMEOUT_MS = B.answerTimeoutMs
const LOG_LEVELS_TEXT = `${B.logLevels.slice(0, -1).join(', ')} or ${B.logLevels.at(-1)}`

/** The agent directory: the variable config::AGENT_DIR_ENV names (trimmed, a relative path
 * resolved), else config::DEFAULT_AGENT_DIR in the home directory, as broker/src/config.rs
 * agent_dir_from_env decides for the process environment. */
function agentDirFromEnv (env = process.env) {
  const value = env[B.agentDirEnv]
  const configured = typeof value === 'string' ? value.trim() : ''
  if (!configured) return join(homedir(), B.defaultAgentDir)
  return isAbsolute(configured) ? configured : resolve(configured)
}

// Options are plain data (lib/plain.js), own keys only, each one the function takes: a misspelt
// option is UNKNOWN_KEY, never ignored, and an undefined one is absent.
const BROKER_OPTIONS = Object.freeze(['agentDir', 'socketPath', 'idleExitMs', 'logLevel', 'settings'])
const ENSURE_OPTIONS = Object.freeze([...BROKER_OPTIONS, 'waitMs'])
const CONNECT_OPTIONS = Object.freeze(['agentDir', 'socketPath', 'autoAck', 'access'])
const ACCESS_CONTROL_OPTIONS = Object.freeze(['agentDir', 'socketPath', 'request', 'timeoutMs'])

function brokerOptions (options, keys, fn) {
  const opts = optionsOf(options, keys, fn, true)
  for (const key of ['agentDir', 'socketPath']) {
    if (opts[key] !== undefined && (typeof opts[key] !== 'string' || opts[key] === '')) fail('INVALID_ARGUMENT', `${key} must be a non-empty string`)
  }
  return opts
}

function socketPathOf (opts) {
  if (opts.socketPath !== undefined) return opts.socketPath
  return join(opts.agentDir ?? agentDirFromEnv(), B.intercomDirName, B.socketFileName)
}

/** The socket of the broker these options name. */
function brokerSocketPath (options) {
  return socketPathOf(brokerOptions(options, BROKER_OPTIONS, 'brokerSocketPath'))
}

/** A whole number of milliseconds the JavaScript side uses itself (waitMs, timeoutMs). */
function msArg (value, path, max = Number.MAX_SAFE_INTEGER) {
  checkPlain(value, DATA, path) // NaN, ±Infinity: UNSUPPORTED_VALUE, as for every value
  if (!Number.isSafeInteger(value) || value < 0 || value > max) fail('INVALID_ARGUMENT', `${path} must be a whole number of milliseconds from 0 to ${max}`)
  return value
}

// Broker settings as key=value pairs for BrokerConfig::set, which parses and range-checks every
// value: JavaScript only refuses what cannot be written faithfully as text (the options were
// checked as plain data: no NaN or Infinity) and passes the rest, so a given value is never
// dropped or replaced by a default.
function settingPairs (opts) {
  const pairs = []
  const setting = (key, value, path) => {
    if (typeof value !== 'number' && typeof value !== 'string') fail('INVALID_ARGUMENT', `${path} must be a number or a string`)
    pairs.push(`${key}=${value}`)
  }
  if (opts.idleExitMs !== undefined) {
    if (typeof opts.idleExitMs !== 'number') fail('INVALID_ARGUMENT', 'idleExitMs must be a number of milliseconds (0 = never)')
    setting(B.idleExitMsKey, opts.idleExitMs, 'idleExitMs')
  }
  if (opts.logLevel !== undefined) {
    if (typeof opts.logLevel !== 'string') fail('INVALID_ARGUMENT', `logLevel must be a string: ${LOG_LEVELS_TEXT}`)
    setting(B.logLevelKey, opts.logLevel, 'logLevel')
  }
  if (opts.settings !== undefined) {
    const settings = opts.settings
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) fail('INVALID_ARGUMENT', 'settings must be an object of limits')
    for (const key of Object.keys(settings)) setting(key, settings[key], `settings.${key}`)
  }
  return pairs
}

/** A broker running in this process. */
class Broker {
  constructor (native) {
    this._native = native
  }

  /** The socket clients connect to. */
  get socketPath () { return this._native.socketPath }
  /** The remote-access gateway socket (remote principals register there). */
  get gatewayPath () { return this._native.gatewayPath }
  /** The intercom directory (the socket, the ownership files, the store). */
  get intercomDir () { return this._native.intercomDir }
  /** True until the broker stops (close() or idle exit). */
  get running () { return this._native.running }

  /** Stops the broker and waits until it removed its files. Returns why it stopped. */
  close () { return this._native.close() }
}

/**
 * Starts the broker of an agent directory in this process. Throws an IntercomError with code
 * BROKER_ALREADY_RUNNING when a live process owns it, BROKER_STORE when its store cannot be
 * used, BROKER_IO for file-system failures, UNKNOWN_KEY for an option it does not take,
 * UNSUPPORTED_VALUE for a value that is not plain JSON data (NaN, Infinity ...), INVALID_ARGUMENT
 * for other bad options (including every setting BrokerConfig::set refuses).
 */
function startBroker (options) {
  const opts = brokerOptions(options, BROKER_OPTIONS, 'startBroker')
  return new Broker(addon.startBroker(opts.agentDir, opts.socketPath, settingPairs(opts)))
}

/** Probes a socket with a health frame: 'compatible', 'incompatible' or 'unreachable' (what the
 * answer means is the Rust client's rules::health_answer). */
function brokerHealth (socketPath, timeoutMs = 1000) {
  return new Promise((resolveHealth) => {
    // A number would make net.connect dial a TCP port.
    if (typeof socketPath !== 'string' || socketPath === '') fail('INVALID_ARGUMENT', 'socketPath must be a non-empty string')
    checkPlain(socketPath, DATA, 'socketPath')
    msArg(timeoutMs, 'timeoutMs', MAX_TIMER_MS)
    const requestId = randomUUID()
    const socket = net.connect(socketPath)
    const reader = new addon.NativeFrameReader()
    // text: the answer's JSON text; null when none came (or none that reads as a frame).
    const finish = (text) => {
      clearTimeout(timer)
      socket.destroy()
      resolveHealth(addon.clientHealth(text, requestId))
    }
    const timer = setTimeout(() => finish(null), timeoutMs)
    socket.on('error', () => finish(null))
    socket.on('connect', () => socket.write(addon.clientHealthRequest(requestId)))
    socket.on('data', (chunk) => {
      reader.push(chunk)
      let text
      try { text = reader.nextFrame() } catch { return finish(null) }
      if (text !== null) finish(text)
    })
  })
}

/**
 * Uses the running broker, or starts one in this process: agent_intercom_broker::ensure (probe,
 * the spawn lock, start, retry while another starter's broker comes up), on a worker thread.
 * Concurrent callers (threads or processes) end with exactly one broker. Resolves to
 * { started, socketPath, broker? }.
 */
async function ensureBroker (options) {
  const opts = brokerOptions(options, ENSURE_OPTIONS, 'ensureBroker')
  const socketPath = socketPathOf(opts)
  const waitMs = opts.waitMs === undefined ? undefined : msArg(opts.waitMs, 'waitMs')
  const ensured = await addon.ensureBroker(opts.agentDir, opts.socketPath, settingPairs(opts), waitMs)
  return ensured.started ? { started: true, socketPath, broker: new Broker(ensured.broker) } : { started: false, socketPath }
}

/** A frame as bytes; its values must be plain JSON data (lib/plain.js), paths start at its type. */
function encodeFrame (value) {
  const body = Buffer.from(jsonText(value, FRAME, value.type), 'utf8')
  const frame = Buffer.allocUnsafe(4 + body.length)
  frame.writeUInt32BE(body.length, 0)
  body.copy(frame, 4)
  return frame
}

/** An outgoing message as a fresh object: the caller's is checked as plain data before a
 * property of it is read (so no getter or proxy trap runs) and never changed. */
function outgoing (message) {
  if (typeof message === 'string') return { content: { text: message } }
  if (message === null || typeof message !== 'object') fail('INVALID_ARGUMENT', 'message must be a string or an object')
  checkPlain(message, FRAME, 'message')
  if (Array.isArray(message)) fail('INVALID_ARGUMENT', 'message must be a string or an object')
  const m = { ...message }
  if (m.text !== undefined && m.content === undefined) {
    m.content = { text: m.text }
    delete m.text
  }
  return m
}

function deliveryError (frame) {
  const error = new IntercomError(frame.code, frame.reason)
  error.accepted = frame.accepted
  error.messageId = frame.messageId
  return error
}

const isText = (value) => typeof value === 'string' && value !== '' && !value.includes('\0')

/** A registration credential (options.access of connect) as the JSON text the addon checked. */
function accessText (value, path) {
  return addon.clientAccess(jsonText(value, FRAME, path), path)
}

/** The error the broker's refusal stands for. */
const refusalError = (refusal) => new IntercomError(refusal.code, refusal.message)

/**
 * A connection to the broker. Events: 'message' ({ deliveryId, from, message, ack }),
 * 'session_joined', 'session_left', 'presence_update', 'ask_deferred', 'ask_cancelled',
 * 'broker_error' (an error frame), 'close'. With autoAck (the default) every message is
 * acknowledged right after the 'message' listeners return. The opt-in extensions (docs/hub.md)
 * add 'queued' ({ messageId, deliveryId }: the broker queued a send for an offline recipient),
 * 'read' ({ messageId, deliveryId }: the recipient read a message sent with receipts), and
 * 'delivered' ({ messageId, deliveryId }) and 'delivery_failed' (a DeliveryError) for an
 * outcome no pending send waits for (a queued message's, typically).
 */
class IntercomClient extends EventEmitter {
  constructor (socket, options) {
    super()
    this._socket = socket
    this._reader = new addon.NativeFrameReader()
    this._requests = new Map()
    this._deliveries = new Map()
    this._registration = null
    this._autoAck = options.autoAck !== false
    this._access = options.access // the credential's JSON text (accessText), or undefined
    this.sessionId = undefined
    this.closed = false
    socket.on('data', (chunk) => this._data(chunk))
    socket.on('close', () => this._closed())
    socket.on('error', () => {})
  }

  _write (frame) { this._writeBytes(encodeFrame(frame)) }

  _writeBytes (bytes) {
    if (this.closed) fail('NOT_CONNECTED', 'the connection to the broker is closed')
    this._socket.write(bytes)
  }

  _data (chunk) {
    this._reader.push(chunk)
    while (!this._socket.destroyed) {
      let text
      try { text = this._reader.nextFrame() } catch (error) {
        // A frame no client can use (too large, not UTF-8, not JSON): the stream cannot be
        // resynchronised. A registration waiting for its answer gets the error.
        return this._refuse(this._takeRegistration(), error)
      }
      if (text === null) return
      this._frame(text)
    }
  }

  _takeRegistration () {
    const registration = this._registration
    this._registration = null
    return registration
  }

  /** Rejects the registration (else reports the error) and closes the connection. */
  _refuse (registration, error) {
    if (registration) registration.reject(error)
    else this.emit('broker_error', error)
    this._socket.destroy()
  }

  /** A registered or error frame answering `registration` (null: unasked), as the Rust client's
   * rules::register_answer reads it. */
  _answer (text, registration) {
    let refusal
    try { refusal = addon.clientRegisterAnswer(text, registration ? registration.access : null) } catch (error) {
      // An answer no client can use: the connection the broker may hold registered on the
      // strength of it is closed.
      return this._refuse(registration, error)
    }
    if (refusal !== null) return registration ? registration.reject(refusalError(refusal)) : this.emit('broker_error', refusalError(refusal))
    const frame = JSON.parse(text)
    this.sessionId = frame.sessionId
    const result = { sessionId: frame.sessionId }
    if (frame.access !== undefined) result.access = frame.access
    if (frame.remoteAccess !== undefined) result.remoteAccess = frame.remoteAccess
    if (registration) registration.resolve(result)
  }

  _frame (text) {
    // The first frame after a register request is its answer, whatever it is (as for C).
    if (this._registration) return this._answer(text, this._takeRegistration())
    const frame = JSON.parse(text)
    if (frame === null || typeof frame !== 'object' || typeof frame.type !== 'string') return
    switch (frame.type) {
      case 'registered':
        return this._answer(text, null)
      case 'error':
        this.emit('broker_error', refusalError(addon.clientBrokerRefusal(text)))
        return
      case 'sessions':
      case 'ask_control_result': {
        const pending = this._requests.get(frame.requestId)
        if (pending && pending.messageId === undefined) {
          this._requests.delete(frame.requestId)
          pending.resolve(frame.type === 'sessions' ? frame.sessions : { applied: frame.applied, action: frame.action, messageId: frame.messageId })
        }
        return
      }
      case 'delivery_accepted': {
        const pending = this._deliveries.get(frame.messageId)
        if (pending) pending.deliveryId = frame.deliveryId
        return
      }
      case 'delivered':
      case 'delivery_failed': {
        const pending = this._deliveries.get(frame.messageId)
        const outcome = frame.type === 'delivered' ? { messageId: frame.messageId, deliveryId: frame.deliveryId } : deliveryError(frame)
        // No send waits for it (a queued message's send resolved at 'queued'): an event.
        if (!pending) return this.emit(frame.type, outcome)
        this._deliveries.delete(frame.messageId)
        if (frame.type === 'delivered') pending.resolve(outcome)
        else pending.reject(outcome)
        return
      }
      case 'delivery_queued': {
        const queued = { messageId: frame.messageId, deliveryId: frame.deliveryId }
        const pending = this._deliveries.get(frame.messageId)
        if (pending) {
          this._deliveries.delete(frame.messageId)
          pending.resolve({ ...queued, queued: true })
        }
        this.emit('queued', queued)
        return
      }
      case 'message_read':
        this.emit('read', { messageId: frame.messageId, deliveryId: frame.deliveryId })
        return
      case 'delivery_status': {
        const pending = this._requests.get(frame.requestId)
        if (!pending || pending.messageId === undefined) return
        this._requests.delete(frame.requestId)
        let state
        try { state = addon.clientDeliveryStatusAnswer(text, frame.requestId, pending.messageId) } catch (error) { return pending.reject(error) }
        pending.resolve(state)
        return
      }
      case 'message': {
        let acked = false
        const ack = () => {
          if (acked || this.closed) return
          acked = true
          this._write({ type: 'message_received', deliveryId: frame.deliveryId })
        }
        this.emit('message', { deliveryId: frame.deliveryId, from: frame.from, message: frame.message, ack })
        if (this._autoAck) ack()
        return
      }
      default:
        this.emit(frame.type, frame)
    }
  }

  _closed () {
    if (this.closed) return
    this.closed = true
    const error = new IntercomError('NOT_CONNECTED', 'the connection to the broker closed')
    if (this._registration) this._registration.reject(error)
    for (const p of this._requests.values()) p.reject(error)
    for (const p of this._deliveries.values()) p.reject(error)
    this._requests.clear()
    this._deliveries.clear()
    this.emit('close')
  }

  _request (frame) {
    const requestId = randomUUID()
    return new Promise((resolveRequest, reject) => {
      this._requests.set(requestId, { resolve: resolveRequest, reject })
      try { this._write({ ...frame, requestId }) } catch (error) {
        this._requests.delete(requestId)
        reject(error)
      }
    })
  }

  /**
   * Registers: session = { cwd, model, pid, startedAt, lastActivity, name?, status?,
   * runtimeInstanceId? }. With access ({ enrollmentToken } or { sessionCredential, sessionId,
   * generation }, on a connection to the remote gateway) it registers as a remote principal:
   * the broker assigns the id, and its answer must carry the remote-access contract of this
   * package and the broker-owned provenance (else REMOTE_ACCESS_INCOMPATIBLE, and the connection
   * is closed). Resolves to { sessionId, access?, remoteAccess? } (those two as the broker sent
   * them: access.sessionCredential after an enrollment is the credential to reconnect with);
   * rejects with the broker's error code.
   */
  register (options) {
    return new Promise((resolveRegistration, reject) => {
      const request = addon.clientRegisterRequest(jsonText(options === undefined ? {} : options, FRAME, 'options'), 'options', this._access ?? null)
      if (this._registration) return reject(new IntercomError('INVALID_ARGUMENT', 'a registration is already in progress'))
      this._registration = { resolve: resolveRegistration, reject, access: request.accessJson ?? null }
      try { this._writeBytes(request.frame) } catch (error) {
        this._registration = null
        reject(error)
      }
    })
  }

  /** The sessions this session can see (itself and its scope). */
  list () { return this._request({ type: 'list' }) }

  /**
   * Sends a message ({ text } or a full { id?, content, replyTo?, expectsReply? }). Resolves when
   * the receiver acknowledged it; rejects with the delivery failure code (err.accepted tells
   * whether the broker had accepted it), or UNSUPPORTED_VALUE when it is not plain JSON data.
   * options (docs/hub.md; the rules are agent_intercom_broker::client::rules::SendOptions):
   * { queue?, receipts? }. With queue, a message to the full id of a known session that is not
   * connected is queued for it: the promise resolves { messageId, deliveryId, queued: true }
   * then, and the outcome comes as a 'delivered' or 'delivery_failed' event (QUEUE_EXPIRED after
   * the broker's offline_ttl_ms); a full queue rejects with QUEUE_FULL. With receipts, 'read' is
   * emitted once the recipient has read it (markRead). Without options, the send is protocol v4's.
   */
  send (to, message, options) { return this._send(to, message, undefined, options) }

  /** Sends a message that expects a reply; the reply arrives as a 'message' with replyTo. */
  ask (to, message, options) { return this._send(to, message, { expectsReply: true }, options) }

  /** Replies to an ask (replyTo = the ask's message id). */
  reply (to, replyTo, message, options) { return this._send(to, message, { replyTo }, options) }

  _send (to, message, extra, options) {
    return new Promise((resolveDelivery, reject) => {
      const members = options === undefined ? {} : JSON.parse(addon.clientSendOptions(jsonText(options, FRAME, 'options'), 'options'))
      const m = { ...outgoing(message), ...extra }
      m.id = m.id ?? randomUUID()
      m.timestamp = m.timestamp ?? Date.now()
      this._deliveries.set(m.id, { resolve: resolveDelivery, reject })
      try { this._write({ type: 'send', to, ...members, message: m }) } catch (error) {
        this._deliveries.delete(m.id)
        reject(error)
      }
    })
  }

  /** Tells the broker the message of this delivery was shown to the model (message_read): its
   * sender, if it asked for receipts, is told; the broker records it as read. */
  markRead (deliveryId) {
    if (typeof deliveryId !== 'string') fail('INVALID_ARGUMENT', 'deliveryId must be a non-empty string')
    this._writeBytes(addon.clientMessageReadRequest(deliveryId, 'deliveryId'))
  }

  /** The state of one of this session's messages: 'accepted', 'queued', 'delivered', 'read',
   * 'failed', 'expired' or 'unknown' (another session's message id is unknown too). */
  deliveryStatus (messageId) {
    return new Promise((resolveStatus, reject) => {
      if (typeof messageId !== 'string') fail('INVALID_ARGUMENT', 'messageId must be a non-empty string')
      const requestId = randomUUID()
      const bytes = addon.clientDeliveryStatusRequest(requestId, messageId, 'messageId')
      this._requests.set(requestId, { resolve: resolveStatus, reject, messageId })
      try { this._writeBytes(bytes) } catch (error) {
        this._requests.delete(requestId)
        reject(error)
      }
    })
  }

  /** Defers one of this session's asks (it stays replyable). Resolves to { applied }. */
  defer (messageId) { return this._request({ type: 'defer_ask', messageId }) }

  /** Cancels one of this session's asks. Resolves to { applied }. */
  cancel (messageId) { return this._request({ type: 'cancel_ask', messageId }) }

  /** Updates name, status or model. */
  presence (update) {
    this._write({ type: 'presence', ...optionsOf(update, ['name', 'status', 'model'], 'presence', false) })
  }

  /** Leaves; the connection may register again. */
  unregister (options) {
    const { preserveAsks } = optionsOf(options, ['preserveAsks'], 'unregister', false)
    this._write(preserveAsks === undefined ? { type: 'unregister' } : { type: 'unregister', preserveAsks })
  }

  /** Closes the connection. */
  close () {
    this._socket.end()
    this._socket.destroySoon?.()
  }
}

/** Connects to the broker (a socket path, or options { socketPath?, agentDir?, autoAck? }).
 * Throws (synchronously, as before) for bad options. */
function connect (options) {
  const opts = brokerOptions(typeof options === 'string' ? { socketPath: options } : options, CONNECT_OPTIONS, 'connect')
  if (opts.autoAck !== undefined && typeof opts.autoAck !== 'boolean') fail('INVALID_ARGUMENT', 'autoAck must be a boolean')
  // With access, the client is a remote principal: it dials the gateway unless told a socket,
  // and register() uses that credential unless given another.
  if (opts.access !== undefined) opts.access = accessText(opts.access, 'options.access')
  const socketPath = opts.socketPath !== undefined || opts.access === undefined
    ? socketPathOf(opts)
    : join(opts.agentDir ?? agentDirFromEnv(), B.intercomDirName, B.gatewayFileName)
  return new Promise((resolveClient, reject) => {
    const socket = net.connect(socketPath)
    socket.once('connect', () => resolveClient(new IntercomClient(socket, opts)))
    socket.once('error', (error) => reject(new IntercomError('NOT_CONNECTED', `cannot connect to ${socketPath}: ${error.code || error.message}`)))
  })
}

/**
 * Sends one access_control request on a connection of its own and resolves to the broker's
 * access_control_result frame (its requestId and action those of the request). Options:
 * { socketPath | agentDir (its local socket), request, timeoutMs? }; request is the frame without
 * its type: { action, adminToken, ... } on the local socket (issue_enrollment, revoke_subtree,
 * inspect_tree, adopt_subtree; the admin token is in the broker's broker-admin.json), or
 * { action, access: { sessionCredential, sessionId, generation }, ... } on the remote gateway
 * (issue_child_enrollment, inspect_tree); requestId is a fresh UUID unless given. Rejects with
 * the broker's error code (ACCESS_DENIED, INVALID_REQUEST), NOT_CONNECTED when no answer came
 * within timeoutMs, INVALID_FRAME for an answer that is not this request's result, and
 * INVALID_ARGUMENT, UNKNOWN_KEY or UNSUPPORTED_VALUE before anything is sent.
 */
function accessControl (options) {
  return new Promise((resolveResult, reject) => {
    const opts = optionsOf(options, ACCESS_CONTROL_OPTIONS, 'accessControl', false)
    for (const key of ['agentDir', 'socketPath']) {
      if (opts[key] !== undefined && !isText(opts[key])) fail('INVALID_ARGUMENT', `${key} must be a non-empty string`)
    }
    const timeoutMs = opts.timeoutMs === undefined ? ANSWER_TIMEOUT_MS : msArg(opts.timeoutMs, 'timeoutMs', MAX_TIMER_MS)
    if (opts.request === undefined) fail('INVALID_ARGUMENT', 'options.request is required: { action, adminToken | access, ... }')
    const request = addon.clientAccessControlRequest(jsonText(opts.request, FRAME, 'options.request'), 'options.request')
    const socketPath = socketPathOf(opts)
    const socket = net.connect(socketPath)
    const reader = new addon.NativeFrameReader()
    let done = false
    const finish = (error, result) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      if (error) reject(error)
      else resolveResult(result)
    }
    const timer = setTimeout(() => finish(new IntercomError('NOT_CONNECTED', `the broker did not answer access_control within ${timeoutMs} ms`)), timeoutMs)
    socket.on('error', (error) => finish(new IntercomError('NOT_CONNECTED', `cannot reach ${socketPath}: ${error.code || error.message}`)))
    socket.on('close', () => finish(new IntercomError('NOT_CONNECTED', 'the broker closed the connection without answering access_control')))
    socket.on('connect', () => socket.write(request.frame))
    socket.on('data', (chunk) => {
      reader.push(chunk)
      let text
      try {
        text = reader.nextFrame()
        if (text === null) return
        addon.clientAccessControlAnswer(text, request.requestId, request.action)
      } catch (error) { return finish(error) }
      finish(null, JSON.parse(text))
    })
  })
}

module.exports = {
  startBroker, ensureBroker, brokerHealth, brokerSocketPath, agentDirFromEnv, connect, accessControl,
  Broker, IntercomClient, MAX_FRAME_BYTES,
}
