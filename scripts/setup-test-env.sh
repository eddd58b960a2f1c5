#!/usr/bin/env bash
# `npm run test:setup`: installs everything `npm test` needs on Debian 12 with node 20, skipping what is already
# there, then checks every stage's prerequisites the way `npm test` will (node test/run-all.mjs --check).
#   1. Debian packages (root; apt-get only when one is missing)  2. node_modules (npm ci when it does not match
#   package-lock.json)  3. .venv + tritonserver (scripts/setup-python.sh)  4. code-server (test/e2e/install-code-server.sh)
# Each step verifies what it installed by running it where that is cheap, never by what an earlier run left in $HOME.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-torch/numpy: the tiny test model behind our model.py (Debian's CPU torch 1.13, no CUDA download).
# python3-venv, libpython3.11: .venv and the Python backend stub. libopenblas0-pthread: BLAS whose threads we pin
# to 1. chromium: webview, reliability, e2e and bench stages. fonts-wqy-microhei: readable Chinese in screenshots.
# ripgrep + libkrb5-dev: code-server's offline install (see test/e2e/install-code-server.sh).
# docker.io (dockerd 20.10, containerd, runc, its CLI) + mmdebstrap + iproute2: the docker stage's private Docker
# Engine and the Debian base of its CPU serving image (test/docker/README.md).
APT_PACKAGES=(python3-torch python3-numpy python3-venv libpython3.11 libopenblas0-pthread chromium fonts-wqy-microhei ripgrep libkrb5-dev docker.io mmdebstrap iproute2)

missing_packages() {
  local p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
  done
}

echo "::: Debian packages"
mapfile -t missing < <(missing_packages)
if [ ${#missing[@]} -eq 0 ]; then
  echo "all ${#APT_PACKAGES[@]} installed"
else
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-test-env: Debian packages missing: ${missing[*]}; as root run: apt-get update && apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "installing ${missing[*]}"
  log=$(mktemp)
  if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q -o DPkg::Lock::Timeout=600 \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 "${missing[@]}"; } >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "setup-test-env: apt-get failed (log above)" >&2
    exit 1
  fi
  rm -f "$log"
  mapfile -t still < <(missing_packages)
  [ ${#still[@]} -eq 0 ] || { echo "setup-test-env: apt-get finished, but not installed: ${still[*]}" >&2; exit 1; }
fi
# Chromium must start, not only be unpacked: its version line, from a throwaway HOME (no profile state counts).
tmp_home=$(mktemp -d)
chromium_version=$(HOME="$tmp_home" XDG_CONFIG_HOME="$tmp_home/config" /usr/bin/chromium --version 2>&1 || true)
rm -rf "$tmp_home"
# (Debian's launcher script may print shell noise from /etc/chromium.d first: only the version line counts.)
grep -E '^Chromium [0-9]+\.' <<<"$chromium_version" \
  || { echo "setup-test-env: /usr/bin/chromium does not run (--version printed: ${chromium_version:0:300})" >&2; exit 1; }

# The Docker Engine pieces must run: each prints its version (the stage starts the daemon itself).
for tool in "/usr/bin/docker --version" "/usr/sbin/dockerd --version" "/usr/bin/containerd --version" "/usr/sbin/runc --version" "/usr/bin/mmdebstrap --version"; do
  line=$($tool 2>&1 | head -1) || { echo "setup-test-env: '$tool' does not run: ${line:0:300}" >&2; exit 1; }
  echo "$line"
done

echo "::: node_modules"
# `npm ls --all` fails on a missing or wrong-version package anywhere in the tree: exactly "not what npm ci makes".
if [ -d node_modules ] && npm ls --all >/dev/null 2>&1; then
  echo "matches package-lock.json"
elif [ -L node_modules ]; then  # never reinstall someone else's tree (a worktree sharing the main checkout's)
  echo "setup-test-env: node_modules is a link to $(readlink -f node_modules) that does not match package-lock.json; run npm ci there" >&2
  exit 1
else
  npm ci --no-audit --no-fund
  npm ls --all >/dev/null 2>&1 || { echo "setup-test-env: npm ci finished, but npm ls --all still reports problems" >&2; exit 1; }
fi

echo "::: python test environment and tritonserver"
bash scripts/setup-python.sh

echo "::: code-server for the end-to-end stage"
bash test/e2e/install-code-server.sh

echo "::: test prerequisites"
node test/run-all.mjs --check
