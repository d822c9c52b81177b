#!/usr/bin/env bash
# Mutation testing of the core's four rule files (scope, routing, asks, scratchpad) with
# cargo-mutants: each mutant is judged by the whole agent-intercom-core test suite (its unit tests,
# core/tests/*.rs and its doc tests; not the C, Node, broker or store suites, which feed the same
# vectors through the same functions). Run by hand, outside CI: it builds and tests the core once
# per mutant, about 280 of them, which takes about an hour on two cores. Installs
# cargo-mutants 27.1.0 when another version or none is found. Results land in
# target/mutants.out; a table per file and the score are printed at the end. docs/testing.md
# ("Mutation testing") keeps the last recorded table and judges each surviving mutant.
#
# Usage: scripts/mutants.sh [cargo-mutants ARG...]
#   Extra arguments go to cargo-mutants, e.g. --iterate (test again only the mutants the last run
#   did not catch), -j 2 (two mutants at a time), --in-place (no copy of the tree: do not edit it
#   meanwhile), --list (only list the mutants).
# MUTANTS_TIMEOUT: seconds one mutant's tests may run, default 90 (a mutant that loops forever is
# reported as a timeout, which counts as detected).
# Exit status: cargo-mutants' own (0 when every viable mutant was caught, 2 when some were missed,
# 3 when some timed out and none was missed, 4 when the unmutated tree fails its tests).
set -euo pipefail
cd "$(dirname "$0")/.."
version=27.1.0
if [ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $version" ]; then
  cargo install --locked cargo-mutants --version "$version"
fi
files=(core/src/scope.rs core/src/routing.rs core/src/asks.rs core/src/scratchpad/mod.rs core/src/scratchpad/redact.rs)
args=(--no-config -p agent-intercom-core --no-shuffle --timeout "${MUTANTS_TIMEOUT:-90}" -o target)
for file in "${files[@]}"; do
  args+=(-f "$file")
done
# Less debug information: faster links, the same tests.
export CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}
status=0
cargo mutants "${args[@]}" "$@" || status=$?
out=target/mutants.out
listing=false
for arg in "$@"; do
  case $arg in --list | --list-files) listing=true ;; esac
done
if ! $listing && [ -f "$out/mutants.json" ] && [ -f "$out/outcomes.json" ]; then
  python3 - "$out" "${files[@]}" <<'EOF'
import json, os, sys

out, files = sys.argv[1], sys.argv[2:]

def per_file(name):
    counts = {}
    path = os.path.join(out, name)
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            if line.strip():
                file = line.split(":", 1)[0]
                counts[file] = counts.get(file, 0) + 1
    return counts

kinds = ["caught", "missed", "timeout", "unviable"]
counts = {kind: per_file(kind + ".txt") for kind in kinds}
# With --iterate, what an earlier run caught (or found unviable) is not tested again.
earlier = per_file("previously_caught.txt")
generated = {}
for mutant in json.load(open(os.path.join(out, "mutants.json"), encoding="utf-8")):
    generated[mutant["file"]] = generated.get(mutant["file"], 0) + 1
columns = ["generated"] + kinds + (["earlier"] if earlier else [])
print("| file | " + " | ".join(columns) + " |")
print("|---|" + "---:|" * len(columns))
totals = dict.fromkeys(columns, 0)
for file in files:
    row = {"earlier": earlier.get(file, 0)}
    row["generated"] = generated.get(file, 0) + row["earlier"]
    row.update({kind: counts[kind].get(file, 0) for kind in kinds})
    for column in columns:
        totals[column] += row[column]
    print(f"| {file} | " + " | ".join(str(row[c]) for c in columns) + " |")
print("| total | " + " | ".join(str(totals[c]) for c in columns) + " |")
if earlier:
    print("score: not computed after --iterate (earlier mixes caught and unviable mutants)")
else:
    viable = totals["generated"] - totals["unviable"]
    detected = totals["caught"] + totals["timeout"]
    if viable:
        score = 100 * detected / viable
        print(f"score (caught + timeout) / viable: {detected}/{viable} = {score:.1f} %")
for kind in ["missed", "timeout"]:
    path = os.path.join(out, kind + ".txt")
    if os.path.exists(path) and os.path.getsize(path):
        print(f"{kind}:")
        print(open(path, encoding="utf-8").read().rstrip())
EOF
fi
exit "$status"
