// The timing loop both benchmarks use: the median ns per call over several timed batches of about
// 10 ms each, after a calibrating warm-up. Nothing here asserts a time.

/** A `measure(fn)` with a budget of 20 ms (`quick`) or 200 ms per function. */
export function timer (quick) {
  const budgetNs = quick ? 20e6 : 200e6
  return function measure (fn) {
    let n = 1
    for (;;) {
      const t = process.hrtime.bigint()
      for (let i = 0; i < n; i++) fn()
      if (Number(process.hrtime.bigint() - t) > 10e6 || n > 1e8) break
      n *= 2
    }
    const samples = []
    const end = process.hrtime.bigint() + BigInt(budgetNs)
    while (samples.length < 5 || (process.hrtime.bigint() < end && samples.length < 50)) {
      const t = process.hrtime.bigint()
      for (let i = 0; i < n; i++) fn()
      samples.push(Number(process.hrtime.bigint() - t) / n)
    }
    samples.sort((a, b) => a - b)
    return samples[samples.length >> 1]
  }
}

/** ns as ns, µs or ms. */
export function fmt (ns) {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(1)} µs` : `${ns.toFixed(1)} ns`
}
