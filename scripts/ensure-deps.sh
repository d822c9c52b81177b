#!/usr/bin/env bash
# Installs what the test suite needs beyond Rust and Node: libcjson-dev (the C vector runner
# parses the vector files with cJSON). Needs root (or sudo) only when something is missing.
set -euo pipefail
missing=()
[ -f /usr/include/cjson/cJSON.h ] || missing+=(libcjson-dev)
command -v g++ >/dev/null || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
for tool in cargo node npm gcc python3; do
  command -v "$tool" >/dev/null || { echo "missing required tool: $tool"; exit 1; }
done
