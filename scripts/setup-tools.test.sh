#!/usr/bin/env bash
# Tests scripts/setup-tools.sh's ensure_tool with stand-ins for apt-get, dpkg-query and id, so
# nothing is installed or removed: bash scripts/setup-tools.test.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT
failures=0

# The stand-ins read the scenario from variables: FAKE_UID, FAKE_LISTED (the package the database
# lists) and FAKE_FIXES (whether apt-get brings the tool back). apt-get logs its arguments.
cat >"$stubs/id" <<'STUB'
#!/bin/sh
echo "${FAKE_UID:-0}"
STUB
cat >"$stubs/dpkg-query" <<'STUB'
#!/bin/sh
for last; do :; done
if [ "$last" = "${FAKE_LISTED:-}" ]; then printf 'install ok installed'; else exit 1; fi
STUB
cat >"$stubs/apt-get" <<'STUB'
#!/bin/sh
echo "$*" >>"$FAKE_LOG"
case "$*" in *install*) if [ "${FAKE_FIXES:-}" = yes ]; then touch "$FAKE_TOOL"; fi ;; esac
STUB
chmod +x "$stubs/id" "$stubs/dpkg-query" "$stubs/apt-get"
export PATH="$stubs:$PATH" FAKE_LOG="$stubs/apt-get.log" FAKE_TOOL="$stubs/tool"

# shellcheck source=scripts/setup-tools.sh
. "$here/setup-tools.sh"
tool_runs() { [ -e "$FAKE_TOOL" ]; }

# scenario NAME EXPECTED_STATUS EXPECTED_APT_LINE EXPECTED_OUTPUT: runs ensure_tool and checks
# its status, the last apt-get call ('' for none) and a piece of what it printed. TOOL (default
# bubblewrap) picks the tool: bubblewrap with tool_runs, or chromium with setup's own chromium_runs.
scenario() {
  local name=$1 status=$2 apt=$3 said=$4 got=0 output
  rm -f "$FAKE_LOG"
  if [ "${TOOL:-bubblewrap}" = chromium ]; then
    output=$(ensure_tool Chromium chromium_runs "$chromium_binary --version" 'to test the documentation site' \
      chromium 2>&1) || got=$?
  else
    output=$(ensure_tool bubblewrap tool_runs 'bwrap --version' 'for the Linux sandbox' bubblewrap 2>&1) || got=$?
  fi
  local last=''
  if [ -e "$FAKE_LOG" ]; then last=$(tail -n 1 "$FAKE_LOG"); fi
  if [ "$got" != "$status" ] || [ "$last" != "$apt" ] || [[ "$output" != *"$said"* ]]; then
    echo "FAIL $name: status $got (want $status), last apt-get '$last' (want '$apt'), said: $output"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
  rm -f "$FAKE_TOOL"
}

touch "$FAKE_TOOL"
scenario 'a tool that runs installs nothing' 0 '' ''
FAKE_LISTED='' FAKE_FIXES=yes scenario 'a missing package is installed' 0 'install -y -qq bubblewrap' 'installing bubblewrap'
FAKE_LISTED=bubblewrap FAKE_FIXES=yes scenario 'a listed package whose binary is gone is reinstalled' 0 \
  'install --reinstall -y -qq bubblewrap' 'reinstalling bubblewrap'
FAKE_LISTED=bubblewrap FAKE_FIXES=no scenario 'a binary still gone after reinstalling fails, saying what to do' 1 \
  'install --reinstall -y -qq bubblewrap' "still does not run after apt-get installed bubblewrap: 'bwrap --version' fails"
FAKE_UID=1000 FAKE_LISTED='' scenario 'without root it only says what to install' 0 '' \
  "install it (e.g. 'sudo apt-get install bubblewrap')"
FAKE_UID=1000 FAKE_LISTED=bubblewrap scenario 'without root it says to reinstall a listed package' 0 '' \
  "'sudo apt-get install --reinstall bubblewrap'"

# chromium_runs runs setup's check against a stand-in browser that answers --version once apt-get
# has "installed" it (FAKE_TOOL exists) and fails like a browser whose libraries are gone otherwise.
chromium_binary="$stubs/chromium"
cat >"$chromium_binary" <<'STUB'
#!/bin/sh
if [ -e "$FAKE_TOOL" ] && [ "$1" = --version ]; then echo 'Chromium 1.0'; else exit 127; fi
STUB
chmod +x "$chromium_binary"
touch "$FAKE_TOOL"
TOOL=chromium scenario 'a Chromium that answers --version installs nothing' 0 '' ''
TOOL=chromium FAKE_LISTED='' FAKE_FIXES=yes scenario 'a missing Chromium is installed from Debian' 0 \
  'install -y -qq chromium' 'installing chromium'
TOOL=chromium FAKE_LISTED=chromium FAKE_FIXES=no scenario 'a Chromium that still fails after reinstalling fails setup' 1 \
  'install --reinstall -y -qq chromium' "'$chromium_binary --version' fails"
TOOL=chromium FAKE_UID=1000 FAKE_LISTED='' scenario 'without root it says to install Chromium' 0 '' \
  "install it (e.g. 'sudo apt-get install chromium') to test the documentation site"

if [ "$failures" -gt 0 ]; then exit 1; fi
