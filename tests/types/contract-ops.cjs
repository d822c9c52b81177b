'use strict'
// Run by scripts/test-types.sh with the pinned TypeScript: type-checks the package's JavaScript
// where it names a contract operation. lib/contract.js types the `op` of call, callFrozen and
// callReadOnce (and the helpers that hand theirs on) as ContractOp, the union
// bindings-node/facts.d.ts holds of the core's operations (`cargo xtask gen`); an operation
// renamed or removed in Rust is then an error at each JavaScript call that still names it. Only
// errors about ContractOp count: the package's JavaScript is not written to pass checkJs whole
// (it has no Node type declarations here).
const { readdirSync } = require('node:fs')
const { join, relative } = require('node:path')
const ts = require('typescript')

const root = join(__dirname, '..', '..')

function packageJs (dir) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (!['node_modules', 'src', 'npm'].includes(entry.name)) out.push(...packageJs(path))
    } else if (entry.name.endsWith('.js')) {
      out.push(path)
    }
  }
  return out
}

const program = ts.createProgram(packageJs(join(root, 'bindings-node')), {
  allowJs: true,
  checkJs: true,
  noEmit: true,
  module: ts.ModuleKind.Node16,
  moduleResolution: ts.ModuleResolutionKind.Node16,
  target: ts.ScriptTarget.ES2022,
  types: [],
})
const found = ts.getPreEmitDiagnostics(program)
  .filter((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n').includes('ContractOp'))
for (const d of found) {
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start)
  const text = ts.flattenDiagnosticMessageText(d.messageText, ' ')
  console.error(`${relative(root, d.file.fileName)}:${line + 1}:${character + 1}: ${text}`)
}
if (found.length > 0) process.exit(1)
