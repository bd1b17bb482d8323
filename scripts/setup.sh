#!/usr/bin/env bash
# Sets up a fresh machine (Node 20 + npm) to build, test and run Ghost. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

export TURBO_TELEMETRY_DISABLED=1 TURBO_NO_UPDATE_NOTIFIER=1
pnpm_version=$(node -p "require('./package.json').packageManager.split('@')[1]")

if [ "$(pnpm --version 2>/dev/null || true)" != "$pnpm_version" ]; then
  echo "setup: installing pnpm $pnpm_version"
  npm install --global --silent "pnpm@$pnpm_version"
fi

# bubblewrap contains code-mode programs on Linux; install it where we may.
if [ "$(uname -s)" = "Linux" ] && ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing bubblewrap"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "setup: bubblewrap is missing; install it (e.g. 'sudo apt-get install bubblewrap') for the Linux sandbox"
  fi
fi

# @ghost/session-postgres's tests start a throwaway PostgreSQL server; install Debian's where we may.
postgres_runs() {
  local bindir
  for bindir in "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/*/bin; do
    if [ -x "$bindir/initdb" ] && "$bindir/postgres" --version >/dev/null 2>&1; then return 0; fi
  done
  command -v initdb >/dev/null 2>&1 && postgres --version >/dev/null 2>&1
}
if [ "$(uname -s)" = "Linux" ] && ! postgres_runs; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing postgresql"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "setup: PostgreSQL is missing; install it (e.g. 'sudo apt-get install postgresql') to run the Postgres session tests"
  fi
fi

# node-gyp builds native addons against the local Node headers, without downloading them.
if [ -d /usr/include/node ]; then export npm_config_nodedir=/usr; fi

pnpm install --frozen-lockfile --reporter=append-only | tail -n 3

# The suite also runs on the current LTS (docs/testing.md), installed into a cache folder.
node scripts/lts-node.mjs install >/dev/null
echo "setup: done"
