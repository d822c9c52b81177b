'use strict'
// The Node side of tests/python/test_node.py: a session of the Node package (the checkout's
// addon, scripts/build-node.sh) on the broker Python started. It answers asks with "pong: <text>",
// and once Python said "go", sends a message to "py", asks "py" and prints the reply, then leaves.
// Usage: node node_peer.js <agentDir> [scopeId]
const { connect } = require('../../bindings-node/lib/broker.js')

async function main () {
  const [agentDir, scopeId] = process.argv.slice(2)
  const client = await connect({ agentDir })
  const registered = await client.register({
    session: { cwd: process.cwd(), model: 'node', pid: process.pid, startedAt: Date.now(), lastActivity: Date.now(), name: 'node' },
    ...(scopeId ? { scopeId } : {})
  })
  const replies = new Map()
  client.on('message', ({ from, message }) => {
    const text = message.content && message.content.text
    if (message.replyTo && replies.has(message.replyTo)) return replies.get(message.replyTo)(text)
    console.log(`node got: ${text}`)
    if (message.expectsReply) client.reply(from.id, message.id, { text: `pong: ${text}` }).catch((e) => console.log(`reply failed: ${e.code}`))
    if (text === 'go') run(from.id).catch((e) => { console.log(`failed: ${e.code} ${e.message}`); process.exit(1) })
  })
  async function run (py) {
    await client.send(py, { text: 'from node' })
    const id = `node-ask-${process.pid}`
    const reply = new Promise((resolve) => replies.set(id, resolve))
    await client.ask('py', { id, text: 'question' })
    console.log(`node got reply: ${await reply}`)
    client.close()
  }
  console.log(`ready ${registered.sessionId}`)
}
main().catch((e) => { console.log(`failed: ${e.code} ${e.message}`); process.exit(1) })
