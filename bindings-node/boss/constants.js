'use strict'
// The constants of ./boss that the core owns (core/src/boss/wire.rs `constants_json`), read from
// the core once at load and shared by the modules of ./boss.
const { call } = require('../lib/contract.js')

module.exports = call('boss.constants', [])
