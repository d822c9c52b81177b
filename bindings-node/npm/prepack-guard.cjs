// `npm pack` (and `npm publish`) of a platform package runs this first: it refuses to make a
// tarball that lacks the addon or a licence text (scripts/build-node.sh puts them there), since
// such a package would install and then fail at the first require.
'use strict'
const { existsSync, readFileSync } = require('node:fs')

const pkg = JSON.parse(readFileSync('package.json', 'utf8'))
const missing = pkg.files.filter((file) => !existsSync(file))
if (missing.length > 0) {
  console.error(
    `${pkg.name}: refusing to pack without ${missing.join(', ')} ` +
      '(build the addon first: bash scripts/build-node.sh)'
  )
  process.exit(1)
}
