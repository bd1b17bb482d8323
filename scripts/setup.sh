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

# shellcheck source=scripts/setup-tools.sh
. scripts/setup-tools.sh

if [ "$(uname -s)" = "Linux" ]; then
  # bubblewrap contains code-mode programs on Linux; install it where we may.
  ensure_tool bubblewrap bwrap_runs 'bwrap --version' 'for the Linux sandbox' bubblewrap || exit 1
  # @ghost/session-postgres's tests start a throwaway PostgreSQL server; install Debian's where we may.
  # shellcheck disable=SC2046 # one package name a line
  ensure_tool PostgreSQL postgres_runs '/usr/lib/postgresql/<version>/bin/postgres --version' \
    'to run the Postgres session tests' postgresql $(postgres_server_packages) || exit 1
  # The documentation site's tests drive Debian's Chromium with playwright-core (no browser download).
  ensure_tool Chromium chromium_runs "$chromium_binary --version" 'to test the documentation site' chromium || exit 1
fi

# node-gyp builds native addons against the local Node headers, without downloading them.
if [ -d /usr/include/node ]; then export npm_config_nodedir=/usr; fi

pnpm install --frozen-lockfile --reporter=append-only | tail -n 3

# The suite also runs on the current LTS (docs/testing.md), installed into a cache folder.
node scripts/lts-node.mjs install >/dev/null
echo "setup: done"
