'use strict'
// @ctliz/agent-intercom-core/team-manifest: the tmuxdeck team manifest, parsed and checked by
// the Rust core (core/src/team.rs).
//
// Every decision is the core's: which path (team.resolvePath), whether a directory or a file
// may be used (team.checkDirectory, team.checkFile), whether what was read fits
// (team.checkLength), and whether the text is a manifest (team.parse). This module only does
// the I/O between those questions. The file is opened with O_NOFOLLOW and the descriptor's
// fstat must be the file the lstat checked, so a file swapped after its check is refused
// instead of read; at most MAX_TEAM_MANIFEST_BYTES + 1 bytes are ever read.
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const { ContractValidationError, call, registerError } = require('../lib/contract.js')

const constants = call('team.constants', [])
const TMUXDECK_TEAM_MANIFEST_VERSION = constants.TMUXDECK_TEAM_MANIFEST_VERSION
const TMUXDECK_TEAM_MANIFEST_BACKEND = constants.TMUXDECK_TEAM_MANIFEST_BACKEND
const MAX_TEAM_MANIFEST_BYTES = constants.MAX_TEAM_MANIFEST_BYTES
const MAX_TEAM_MANIFEST_MEMBERS = constants.MAX_TEAM_MANIFEST_MEMBERS

// The two codes, as the core names them (the JavaScript raises them for I/O failures).
const { INVALID, UNAVAILABLE } = constants.codes

/** The error of every refusal: `message` is the code, and nothing else is said. */
class TeamManifestError extends Error {
  code
  constructor (code) {
    super(code)
    this.name = 'TeamManifestError'
    this.code = code
  }
}

registerError('TeamManifestError', (f) => new TeamManifestError(f.code))

// O_NONBLOCK: a FIFO put in the file's place cannot make the open wait for a writer (the
// fstat check then refuses it). It changes nothing for a regular file.
const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants
const OPEN_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY
const BIG = { bigint: true } // exact dev and ino
const READ_LIMIT = MAX_TEAM_MANIFEST_BYTES + 1

/** `parseTeamManifest`: a JSON text or a value; a fresh manifest, or TeamManifestError. */
function parseTeamManifest (value) {
  try {
    return call('team.parse', [value])
  } catch (error) {
    // Only the snapshot throws this class here: the value nests too deep or is cyclic, which
    // no manifest does.
    if (error instanceof ContractValidationError) throw new TeamManifestError(INVALID)
    throw error
  }
}

function resolvePath (filePath) {
  try {
    return call('team.resolvePath', [filePath])
  } catch (error) {
    // The snapshot refused a cyclic or too deep value: not a string, so no manifest.
    if (error instanceof ContractValidationError) return undefined
    throw error
  }
}

function processUid () {
  return typeof process.getuid === 'function' ? process.getuid() : undefined
}

/** The facts of a (bigint) Stats the core's checks read. */
function facts (stat) {
  return {
    directory: stat.isDirectory(),
    file: stat.isFile(),
    symlink: stat.isSymbolicLink(),
    mode: stat.mode,
    uid: stat.uid,
    size: stat.size,
    dev: stat.dev,
    ino: stat.ino,
  }
}

/** Runs an I/O step: whatever it throws is the file being unavailable. */
function io (step) {
  try {
    return step()
  } catch {
    throw new TeamManifestError(UNAVAILABLE)
  }
}

async function ioAsync (step) {
  try {
    return await step()
  } catch {
    throw new TeamManifestError(UNAVAILABLE)
  }
}

function readUpTo (fd) {
  const buffer = Buffer.alloc(READ_LIMIT)
  let length = 0
  for (;;) {
    const n = fs.readSync(fd, buffer, length, READ_LIMIT - length, null)
    if (n === 0) break
    length += n
    if (length === READ_LIMIT) break
  }
  return buffer.subarray(0, length)
}

async function readUpToAsync (handle) {
  const buffer = Buffer.alloc(READ_LIMIT)
  let length = 0
  for (;;) {
    const { bytesRead } = await handle.read(buffer, length, READ_LIMIT - length, null)
    if (bytesRead === 0) break
    length += bytesRead
    if (length === READ_LIMIT) break
  }
  return buffer.subarray(0, length)
}

/**
 * `readTeamManifest(path?)`: undefined when no path is given (absent or blank); otherwise the
 * manifest in that file, or TeamManifestError (INVALID for a relative path or a malformed
 * manifest, UNAVAILABLE for a file or directory that cannot be used or read).
 */
function readTeamManifest (filePath) {
  const target = resolvePath(filePath)
  if (target === undefined) return undefined
  const uid = processUid()
  const directory = facts(io(() => fs.lstatSync(target.parent, BIG)))
  call('team.checkDirectory', [directory, uid])
  const listed = facts(io(() => fs.lstatSync(target.path, BIG)))
  call('team.checkFile', [listed, uid])
  const fd = io(() => fs.openSync(target.path, OPEN_FLAGS))
  let bytes
  try {
    const opened = facts(io(() => fs.fstatSync(fd, BIG)))
    call('team.checkFile', [opened, uid, listed])
    // The directory must still be the one checked (a symlink swapped in for it after its
    // check could have led the open elsewhere).
    const after = facts(io(() => fs.lstatSync(target.parent, BIG)))
    call('team.checkDirectory', [after, uid, directory])
    bytes = io(() => readUpTo(fd))
  } finally {
    try { fs.closeSync(fd) } catch {}
  }
  call('team.checkLength', [bytes.length])
  return parseTeamManifest(bytes.toString('utf8'))
}

/** `readTeamManifestAsync(path?)`: readTeamManifest with node:fs/promises. */
async function readTeamManifestAsync (filePath) {
  const target = resolvePath(filePath)
  if (target === undefined) return undefined
  const uid = processUid()
  const directory = facts(await ioAsync(() => fsp.lstat(target.parent, BIG)))
  call('team.checkDirectory', [directory, uid])
  const listed = facts(await ioAsync(() => fsp.lstat(target.path, BIG)))
  call('team.checkFile', [listed, uid])
  const handle = await ioAsync(() => fsp.open(target.path, OPEN_FLAGS))
  let bytes
  try {
    const opened = facts(await ioAsync(() => handle.stat(BIG)))
    call('team.checkFile', [opened, uid, listed])
    const after = facts(await ioAsync(() => fsp.lstat(target.parent, BIG)))
    call('team.checkDirectory', [after, uid, directory])
    bytes = await ioAsync(() => readUpToAsync(handle))
  } finally {
    await handle.close().catch(() => {})
  }
  call('team.checkLength', [bytes.length])
  return parseTeamManifest(bytes.toString('utf8'))
}

module.exports = {
  TMUXDECK_TEAM_MANIFEST_VERSION,
  TMUXDECK_TEAM_MANIFEST_BACKEND,
  MAX_TEAM_MANIFEST_BYTES,
  MAX_TEAM_MANIFEST_MEMBERS,
  TeamManifestError,
  parseTeamManifest,
  readTeamManifest,
  readTeamManifestAsync,
}
