#!/usr/bin/env bash
# Before a release: every workspace crate is packaged and builds from its package alone (cargo's
# verification, which rebuilds the dependency tree per crate; about 9 minutes on 2 cores, so CI
# runs `cargo package --no-verify` instead).
set -euo pipefail
cd "$(dirname "$0")/.."
# cargo unpacks the packaged workspace crates from its temporary local registry into
# $CARGO_HOME/registry/src/-<hash of the registry's path>/ and does not unpack a version it finds
# there again: a run from the same folder would verify against the sources of an earlier run.
# Those folders (an unnamed registry's) hold nothing else.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*
cargo package --workspace --locked --quiet
echo "package-check: every crate builds from its package"
