#!/usr/bin/env bash
# Install the system packages the tests and docs need, only when they are missing:
#   graphviz  (`dot`, for Trace.to_graphviz() rendering)
#   chromium  (Debian's browser, driven by Playwright in tests/browser; Playwright cannot download one)
#   fonts     (so Chromium renders JupyterLab text in screenshots)
#   postgresql (Debian's server binaries, /usr/lib/postgresql/*/bin; tests/support/postgres.py
#              starts a throwaway cluster of its own from them on a free loopback port. The package also
#              creates and may start a system cluster on port 5432: harmless, no test uses it)
# Uses apt-get directly as root, through sudo otherwise; says what to do when neither is possible.
# SKIP_SYSTEM_DEPS=1 skips the whole check (the browser and PostgreSQL tests then skip outside CI,
# fail in CI).
set -euo pipefail

if [[ "${SKIP_SYSTEM_DEPS:-0}" == "1" ]]; then
    echo "system-deps: skipped (SKIP_SYSTEM_DEPS=1)"
    exit 0
fi

chromium_bin="${NBAGENTS_CHROMIUM:-/usr/bin/chromium}"
missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
[[ -x "$chromium_bin" ]] || missing+=(chromium)
# NBAGENTS_PG_BIN names server binaries installed some other way; then nothing is needed here.
if [[ -n "${NBAGENTS_PG_BIN:-}" && -x "$NBAGENTS_PG_BIN/initdb" ]]; then
    :
elif ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
    missing+=(postgresql)
fi
if command -v dpkg-query >/dev/null 2>&1; then
    for pkg in fonts-dejavu-core fonts-liberation; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
    done
fi

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "system-deps: graphviz, chromium, fonts and postgresql present"
    exit 0
fi

echo "system-deps: missing ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
    echo "system-deps: ERROR: missing ${missing[*]} and apt-get is not available." >&2
    echo "  Install them with your package manager (the browser must be at $chromium_bin," >&2
    echo "  or set NBAGENTS_CHROMIUM; PostgreSQL's initdb, pg_ctl and postgres in" >&2
    echo "  /usr/lib/postgresql/*/bin, or set NBAGENTS_PG_BIN), or run with SKIP_SYSTEM_DEPS=1" >&2
    echo "  to test without them." >&2
    exit 1
fi

if [[ "$(id -u)" == "0" ]]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && { [[ -t 0 ]] || sudo -n true 2>/dev/null; }; then
    as_root=(sudo)
    [[ -t 0 ]] || as_root=(sudo -n)
else
    echo "system-deps: ERROR: missing ${missing[*]}, and this is neither root nor able to use sudo." >&2
    echo "  Ask an administrator to run:" >&2
    echo "    apt-get update && apt-get install -y ${missing[*]}" >&2
    echo "  or run with SKIP_SYSTEM_DEPS=1 to test without them (browser and PostgreSQL tests" >&2
    echo "  skip outside CI)." >&2
    exit 1
fi

echo "system-deps: installing them with ${as_root[*]:+${as_root[*]} }apt-get install"
log="$(mktemp -t nbagents-apt.XXXXXX.log)"
export DEBIAN_FRONTEND=noninteractive
apt_install() { "${as_root[@]}" apt-get install -y -qq "${missing[@]}" >>"$log" 2>&1; }
# Try with the current package lists first; refresh them once only if that fails (fresh machines).
if ! apt_install; then
    echo "system-deps: refreshing package lists (apt-get update)"
    if ! { "${as_root[@]}" apt-get update -qq >>"$log" 2>&1 && apt_install; }; then
        echo "system-deps: ERROR: apt-get failed; last lines of $log:" >&2
        tail -n 25 "$log" >&2
        exit 1
    fi
fi
rm -f "$log"
echo "system-deps: installed ${missing[*]}"
