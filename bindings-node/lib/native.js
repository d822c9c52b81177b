'use strict'
// Loads the N-API addon. Its failures arrive as Errors whose `code` napi set to the core's stable
// name (bindings-node/src/lib.rs, CodeStatus) and whose message is the core's; the addon is
// wrapped once, here, so that every such failure reaches callers as an IntercomError with the
// same code and message, whichever function or method threw it (or rejected, for a promise).
//
// Where the addon comes from (docs/packaging.md): a source checkout's own build,
// bindings-node/agent_intercom.node (scripts/build-node.sh), when it exists; else the platform
// package for this machine, @ctliz/agent-intercom-core-<id>, an optional dependency of the
// published package, which ships no addon of its own. The platforms are the rows of
// bindings-node/npm/platforms.json.
const { join } = require('node:path')
const { existsSync, readFileSync } = require('node:fs')

class IntercomError extends Error {
  constructor (code, message) {
    super(message)
    this.name = 'IntercomError'
    this.code = code
  }
}

const PACKAGE = require('../../package.json')
const PLATFORMS = require('../npm/platforms.json').platforms
const SOURCE_CHECKOUT_ADDON = join(__dirname, '..', 'agent_intercom.node')

/** The C library this Linux process runs on, 'glibc' or 'musl' (the napi-rs way: the text of
 * /usr/bin/ldd names it and is cheap to read; else the process report, whose header carries
 * glibcVersionRuntime only under glibc); null elsewhere. */
function hostLibc () {
  if (process.platform !== 'linux') return null
  try {
    const ldd = readFileSync('/usr/bin/ldd', 'latin1')
    if (ldd.includes('musl')) return 'musl'
    if (ldd.includes('GNU C Library') || ldd.includes('GLIBC')) return 'glibc'
  } catch {}
  const report = process.report
  if (report && typeof report.getReport === 'function') {
    const excludeNetwork = report.excludeNetwork
    report.excludeNetwork = true
    try {
      const { header, sharedObjects } = report.getReport()
      if (header && header.glibcVersionRuntime) return 'glibc'
      if (Array.isArray(sharedObjects) && sharedObjects.some((file) => /(?:^|\/)(?:ld-musl-|libc\.musl-)/.test(file))) return 'musl'
    } catch {} finally {
      report.excludeNetwork = excludeNetwork
    }
  }
  return 'glibc'
}

/** A platform as the rows' ids spell it: <platform>-<arch>[-gnu|-musl]. */
function platformName ({ platform, arch, libc }) {
  return `${platform}-${arch}${libc ? `-${libc === 'glibc' ? 'gnu' : libc}` : ''}`
}

function packageOf (row) {
  return `${PACKAGE.name}-${row.id}`
}

function hostName () {
  return platformName({ platform: process.platform, arch: process.arch, libc: hostLibc() })
}

function unavailable (message, cause) {
  const supported = PLATFORMS.map((row) => `${row.id} (${packageOf(row)})`).join(', ')
  const host = hostName()
  const error = new IntercomError('NATIVE_ADDON_UNAVAILABLE',
    `${PACKAGE.name} ${PACKAGE.version}: ${message}${cause ? `: ${cause.message}` : ''}. ` +
    `Supported platforms: ${supported} (in a source checkout, build it: npm run build)`)
  error.platform = host
  error.supportedPlatforms = PLATFORMS.map((row) => row.id)
  if (cause) error.cause = cause
  return error
}

function requireAddon (file, from) {
  let loaded
  try {
    loaded = require(file)
  } catch (cause) {
    throw unavailable(`cannot load ${file}${from}`, cause)
  }
  // The JavaScript and the addon are one release: a stale build or a mismatched platform package
  // would answer with another version's rules.
  const version = loaded.constants().version
  if (version !== PACKAGE.version) {
    throw unavailable(`${file}${from} is version ${version}, not ${PACKAGE.version}`)
  }
  return loaded
}

function loadNative () {
  if (existsSync(SOURCE_CHECKOUT_ADDON)) return requireAddon(SOURCE_CHECKOUT_ADDON, '')
  const libc = hostLibc()
  const row = PLATFORMS.find((p) => p.platform === process.platform && p.arch === process.arch &&
    (p.libc || null) === libc)
  if (!row) throw unavailable(`no native addon is built for ${hostName()}`)
  const name = packageOf(row)
  let file
  try {
    file = require.resolve(name)
  } catch {
    throw unavailable(`the native addon for ${row.id} is the package ${name}, which is not ` +
      'installed (npm leaves optional dependencies out under --omit=optional, and a lockfile ' +
      `written on another platform may lack it): npm install ${name}@${PACKAGE.version}`)
  }
  return requireAddon(file, ` (${name})`)
}

const native = loadNative()

const { apply } = Reflect
const { getOwnPropertyNames, getOwnPropertyDescriptor, defineProperty } = Object
const NativePromise = Promise
const promiseCatch = Promise.prototype.catch

const constants = native.constants()
const CODES = new Set(constants.errorCodes)

/** An addon failure carrying one of the core's codes as an IntercomError; anything else (napi's
 * own argument errors, whose codes are napi statuses) unchanged. */
function intercomError (error) {
  if (error instanceof Error && !(error instanceof IntercomError) && CODES.has(error.code)) {
    return new IntercomError(error.code, error.message)
  }
  return error
}

function rejected (error) {
  throw intercomError(error)
}

function converting (fn) {
  return function (...args) {
    let out
    try {
      out = apply(fn, this, args)
    } catch (error) {
      throw intercomError(error)
    }
    return out instanceof NativePromise ? apply(promiseCatch, out, [rejected]) : out
  }
}

// Functions are replaced by converting ones; the classes napi defines keep their identity (they
// are what the addon's factories return) and get converting methods in place.
const addon = { __proto__: null }
for (const name of Object.keys(native)) {
  const value = native[name]
  if (typeof value !== 'function') {
    addon[name] = value
    continue
  }
  const proto = value.prototype
  const methods = proto ? getOwnPropertyNames(proto).filter((key) => key !== 'constructor') : []
  if (methods.length === 0) {
    addon[name] = converting(value)
    continue
  }
  for (const key of methods) {
    const descriptor = getOwnPropertyDescriptor(proto, key)
    if (typeof descriptor.value === 'function') defineProperty(proto, key, { ...descriptor, value: converting(descriptor.value) })
  }
  addon[name] = value
}
Object.freeze(addon)

function fail (code, message) {
  throw new IntercomError(code, message)
}

module.exports = { addon, constants, fail, IntercomError }
