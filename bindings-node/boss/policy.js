'use strict'
// Placeholder: filled in by the issue-9 work on this subpath.
module.exports = {
}
