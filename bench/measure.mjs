// The timing loop both benchmarks use: the median ns per call over several timed batches of about
// 10 ms each, after a calibrating warm-up. Nothing here asserts a time.
//
// `--cpu` times each batch by the process's CPU time (process.cpuUsage: user + system, every
// thread) instead of the wall clock: on a machine shared with other work a batch that loses the
// CPU for a while is not charged for the wait, so two implementations measured in one run compare
// fairly even when the load moves. (It includes the V8 garbage collector's threads, which is the
// honest price of a call that allocates.)

const cpuNs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) * 1000
}
const wallNs = () => Number(process.hrtime.bigint())

/** A `measure(fn)` with a budget of 20 ms (`quick`) or 200 ms per function; `cpu`: CPU time. */
export function timer (quick, cpu = false) {
  const budgetNs = quick ? 20e6 : 200e6
  const now = cpu ? cpuNs : wallNs
  return function measure (fn) {
    let n = 1
    for (;;) {
      const t = now()
      for (let i = 0; i < n; i++) fn()
      if (now() - t > 10e6 || n > 1e8) break
      n *= 2
    }
    const samples = []
    const end = wallNs() + budgetNs
    while (samples.length < 5 || (wallNs() < end && samples.length < 50)) {
      const t = now()
      for (let i = 0; i < n; i++) fn()
      samples.push((now() - t) / n)
    }
    samples.sort((a, b) => a - b)
    return samples[samples.length >> 1]
  }
}

/** ns as ns, µs or ms. */
export function fmt (ns) {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(1)} µs` : `${ns.toFixed(1)} ns`
}

/** The machine's load, for the line printed beside a table. */
export async function loadavg () {
  const { loadavg: la, cpus } = await import('node:os')
  return `loadavg ${la().map((x) => x.toFixed(2)).join(' ')} on ${cpus().length} CPUs`
}
