# Functions setup.sh uses to install the system tools Ghost's tests need; sourced, not run.
# scripts/setup-tools.test.sh tests them with stand-ins for apt-get, dpkg-query and id.

# Whether the package database says a Debian package is installed (its files may still be gone).
package_listed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

# ensure_tool LABEL CHECK TRY PURPOSE PACKAGE...
# Makes the function CHECK succeed, installing the PACKAGEs with apt-get where we may (as root). A
# package the database lists although CHECK fails has lost its files, and apt-get install would
# answer "already installed": it is reinstalled instead. Without root or apt-get, it says what to
# install and returns 0. Returns 1, saying what is wrong and what to do, when CHECK still fails
# after installing. TRY is the command that shows the problem; PURPOSE what the tool is for.
ensure_tool() {
  local label=$1 check=$2 try=$3 purpose=$4
  shift 4
  if "$check"; then return 0; fi
  local listed=() missing=() package
  for package in "$@"; do
    if package_listed "$package"; then listed+=("$package"); else missing+=("$package"); fi
  done
  if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    if [ ${#listed[@]} -gt 0 ]; then
      echo "setup: $label does not run ('$try' fails) although ${listed[*]} is installed; reinstall it (e.g. 'sudo apt-get install --reinstall ${listed[*]}') $purpose"
    else
      echo "setup: $label is missing; install it (e.g. 'sudo apt-get install $*') $purpose"
    fi
    return 0
  fi
  apt-get update -qq >/dev/null || true
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || true
  fi
  if [ ${#listed[@]} -gt 0 ]; then
    echo "setup: reinstalling ${listed[*]}: the package database lists it, but '$try' fails"
    DEBIAN_FRONTEND=noninteractive apt-get install --reinstall -y -qq "${listed[@]}" >/dev/null || true
  fi
  if "$check"; then return 0; fi
  echo "setup: $label still does not run after apt-get installed $*: '$try' fails. Run it to see why, fix what it reports (or 'apt-get install --reinstall $*'), then run 'npm run setup' again. It is needed $purpose." >&2
  return 1
}

bwrap_runs() {
  bwrap --version >/dev/null 2>&1
}

# Debian's Chromium, where the documentation site's browser test (apps/docs/src/site.test.ts)
# looks for it. `--version` is answered by the browser binary itself, so its libraries must load.
chromium_binary=/usr/bin/chromium
chromium_runs() {
  "$chromium_binary" --version >/dev/null 2>&1
}

# PostgreSQL's server programs live outside PATH on Debian, under /usr/lib/postgresql/<version>/bin.
postgres_runs() {
  local bindir
  for bindir in "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/*/bin; do
    if [ -x "$bindir/initdb" ] && "$bindir/initdb" --version >/dev/null 2>&1 &&
      "$bindir/postgres" --version >/dev/null 2>&1; then return 0; fi
  done
  command -v initdb >/dev/null 2>&1 && initdb --version >/dev/null 2>&1 && postgres --version >/dev/null 2>&1
}

# The versioned server packages installed (postgresql-15, ...): the binaries are theirs, not the
# postgresql metapackage's, so a reinstall must name them too.
postgres_server_packages() {
  dpkg-query -W -f='${Package} ${Status}\n' 'postgresql-[0-9]*' 2>/dev/null |
    awk '$1 ~ /^postgresql-[0-9.]+$/ && /ok installed/ { print $1 }'
}
