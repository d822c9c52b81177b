'use strict'
// The store gates of ./boss (validate*Store): each is one call into the core
// (core/src/boss/store.rs: the version checks of validateVersionedStoreRecord, then the record's
// parser), which answers the whole result as JSON. Two members are then the caller's own values,
// as the TypeScript gate returns them: `observedVersion` is the record's `version` member, and
// `value` is the record itself when its parser returns its input.
const { call } = require('../lib/contract.js')

const { getOwnPropertyDescriptor } = Object
const hasOwn = Object.hasOwn

/**
 * The gate of the core operation `op` (`boss.validateXStore`). `fresh`: its parser returns a
 * fresh value (kept as the core wrote it) rather than the record itself.
 * @param {import('../facts.js').ContractOp} op
 */
function storeValidator (op, fresh = false) {
  return (value) => {
    let result
    try {
      result = call(op, [value])
    } catch (error) {
      // Only the snapshot can throw here (a value nested deeper than the core reads, or cyclic):
      // the gate never throws, so that is a corrupt record too.
      return { ok: false, status: 'corrupt', path: error.path, message: error.message, preserveExisting: true, mutationAllowed: false }
    }
    const observed = hasOwn(result, 'observedVersion')
    if (observed || (result.ok && !fresh)) {
      // The core answered past its plain-object check, so `value` is a plain object whose
      // `version` is an own data property: reading its descriptor runs nothing of the caller's.
      const version = getOwnPropertyDescriptor(value, 'version').value
      if (observed) result.observedVersion = version
      if (result.ok && !fresh) result.value = value
    }
    return result
  }
}

module.exports = { storeValidator }
