'use strict'
// Placeholder (bwire branch): the other issue-9 helper's module replaces this file.
module.exports = {
}
