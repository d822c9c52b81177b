#!/usr/bin/env bash
# The acceptance gate: pack the npm packages, install the tarballs into an isolated workspace
# (private HOME, TMPDIR, npm cache, agent directories), run the whole protocol-v4 corpus as real
# sessions once with each embedding owning the broker (the Node package, the CLI binary, a C
# program), require identical normalized results that all pass, record what ran, prove exact
# cleanup, and scan every received frame, every log and every persisted file for the scope
# strings used. Writes target/gate-report.json.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
# The build of $AIC_PROFILE (debug by default: the one the tests made; release for a release).
profile=${AIC_PROFILE:-debug}
flag=""; [ "$profile" = release ] && flag="--release"
cargo build $flag --locked --workspace -q
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
rel="$target/$profile"
bash scripts/build-node.sh "$profile" >/dev/null # the addon, in the checkout and its platform package
mkdir -p "$target/c"
gcc -std=c99 -Wall -Wextra -Werror -Iinclude tests/c/gate_broker.c -L"$rel" -lagent_intercom -Wl,-rpath,"$rel" -o "$target/c/gate_broker"

work=$(mktemp -d "${TMPDIR:-/tmp}/aic-gate.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/home" "$work/tmp" "$work/npm-cache" "$work/pkg" "$work/logs"
# The main package and the host's platform package, packed and installed as users get them
# (before HOME moves: the packing asks rustc, through rustup, for the host).
bash scripts/pack-accept.sh --install "$work/pkg" >"$work/logs/pack.log"
app="$work/pkg/app"
tar_sha=$(sed -n 's/^packed ctliz-agent-intercom-core-[0-9][^ ]*\.tgz sha256 \([0-9a-f]*\) .*/\1/p' "$work/logs/pack.log")
[ -n "$tar_sha" ] || { echo "no main tarball in the pack log:"; cat "$work/logs/pack.log"; exit 1; }
rm -rf "$app/test" # the package tests pack-accept.sh copies there (they hold scope strings the scan looks for)
export HOME="$work/home" TMPDIR="$work/tmp" npm_config_cache="$work/npm-cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
unset PI_CODING_AGENT_DIR AGENT_INTERCOM_SCOPE_ID

cp tests/gate/drive.mjs tests/gate/own.mjs "$app/"

wait_socket() { # <socket> <owner-pid>
  for _ in $(seq 1 200); do
    if "$rel/agent-intercom" broker status --socket "$1" >/dev/null 2>&1; then return 0; fi
    kill -0 "$2" 2>/dev/null || { echo "owner $2 died"; return 1; }
    sleep 0.05
  done
  echo "broker at $1 never became healthy"; return 1
}

embeddings=(node cli c)
declare -A owner_pid broker_pid socket_of
for name in "${embeddings[@]}"; do
  agent="$work/agent-$name"
  mkdir -p "$agent"
  socket="$agent/intercom/broker.sock"
  case $name in
    node) coproc OWNER { cd "$app" && exec node own.mjs "$agent" 2>"$work/logs/$name.stderr"; } ;;
    cli) coproc OWNER { exec "$rel/agent-intercom" broker --agent-dir "$agent" --idle-exit 0 --log-level debug 2>"$work/logs/$name.stderr"; } ;;
    c) coproc OWNER { exec "$target/c/gate_broker" "$agent" 2>"$work/logs/$name.stderr"; } ;;
  esac
  pid=$OWNER_PID
  wait_socket "$socket" "$pid"
  owner_pid[$name]=$pid
  broker_pid[$name]=$(cat "$agent/intercom/broker.pid")
  socket_of[$name]=$socket
  (cd "$app" && node drive.mjs "$socket" "$work/logs/$name.frames") > "$work/results-$name.json"
  # Stop the owner the way each embedding is stopped: close stdin, or SIGTERM for the CLI.
  if [ "$name" = cli ]; then kill -TERM "$pid"; else exec {OWNER[1]}>&-; fi
  wait "$pid" || { echo "$name owner exited with $?"; exit 1; }
  for f in broker.sock broker.pid broker.owner; do
    [ ! -e "$agent/intercom/$f" ] || { echo "$name left $f behind"; exit 1; }
  done
  ! kill -0 "${broker_pid[$name]}" 2>/dev/null || { echo "$name broker pid still alive"; exit 1; }
  echo "gate: $name owned the broker (pid ${broker_pid[$name]}), corpus run, files cleaned up"
done

corpus_hash=$(cd "$app" && node -e "import('@ctliz/agent-intercom-core/protocol-v4').then(m => console.log(m.INTERCOM_PROTOCOL_V4_SEMANTICS_HASH))")
node - "$work" "$tar_sha" "$corpus_hash" "$repo/target/gate-report.json" \
  "${owner_pid[node]}" "${broker_pid[node]}" "${socket_of[node]}" \
  "${owner_pid[cli]}" "${broker_pid[cli]}" "${socket_of[cli]}" \
  "${owner_pid[c]}" "${broker_pid[c]}" "${socket_of[c]}" <<'NODE'
const fs = require('node:fs')
const path = require('node:path')
const [work, tarSha, corpusHash, reportPath, ...rest] = process.argv.slice(2)
const names = ['node', 'cli', 'c']
const runs = names.map((name, i) => ({ name, ownerPid: +rest[i * 3], brokerPid: +rest[i * 3 + 1], socket: rest[i * 3 + 2],
  output: JSON.parse(fs.readFileSync(path.join(work, `results-${name}.json`), 'utf8')) }))
const texts = runs.map((r) => JSON.stringify(r.output.results))
const identical = texts.every((t) => t === texts[0])
const failedVectors = runs.flatMap((r) => r.output.results.filter((x) => !x.pass).map((x) => `${r.name}: ${x.name} -> ${JSON.stringify(x.observed)}`))
// Scope scan: every frame received, every log, every persisted file under the workspace.
const scopes = [...new Set(runs.flatMap((r) => r.output.scopesUsed))]
const files = []
const walk = (dir) => { for (const e of fs.readdirSync(dir, { withFileTypes: true })) { const p = path.join(dir, e.name); if (e.isDirectory()) { if (!['node_modules', 'npm-cache', 'pack'].includes(e.name)) walk(p) } else files.push(p) } }
walk(work)
const scanned = files.filter((f) => !/results-.*\.json$/.test(f))
const hits = []
for (const f of scanned) {
  const bytes = fs.readFileSync(f)
  for (const s of scopes) if (bytes.includes(Buffer.from(s))) hits.push(`${path.relative(work, f)} contains ${s}`)
}
const report = {
  tarballSha256: tarSha, corpusHash, node: process.version, platform: `${process.platform}-${process.arch}`,
  embeddings: runs.map((r) => ({ name: r.name, ownerPid: r.ownerPid, brokerPid: r.brokerPid, socket: path.relative(work, r.socket),
    vectors: r.output.vectors, passed: r.output.results.filter((x) => x.pass).length })),
  identicalResults: identical, failedVectors, scopeScan: { scopes: scopes.length, filesScanned: scanned.length, hits },
}
fs.writeFileSync(reportPath, JSON.stringify(report, null, 2) + '\n')
console.log(JSON.stringify(report, null, 2))
const ok = identical && failedVectors.length === 0 && hits.length === 0 && corpusHash === 'ef23cae55b3cca7683fee60e5f2421350cde731dc5424c82286a33a8b9cdf6cb'
const total = runs.reduce((n, r) => n + r.output.vectors, 0)
const passed = runs.reduce((n, r) => n + r.output.results.filter((x) => x.pass).length, 0)
console.log(`gate: ${passed} passed, ${total - passed} failed`)
process.exit(ok ? 0 : 1)
NODE
cleanup
trap - EXIT
[ ! -e "$work" ] || { echo "the workspace was not removed"; exit 1; }
echo "gate: workspace removed; report in target/gate-report.json"
