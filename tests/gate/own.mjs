// For the acceptance gate: owns a broker through the installed Node package until stdin closes.
//   node own.mjs <agent-dir>     prints the socket path, then "ready"
import { startBroker } from '@ctliz/agent-intercom-core/broker'

const broker = startBroker({ agentDir: process.argv[2], idleExitMs: 0, logLevel: 'debug' })
process.stdout.write(`${broker.socketPath}\nready\n`)
process.stdin.resume()
process.stdin.on('end', () => {
  broker.close()
  process.exit(0)
})
