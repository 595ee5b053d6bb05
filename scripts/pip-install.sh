#!/usr/bin/env bash
# Quiet, idempotent `pip install -e .[EXTRAS]` into a venv.
#   scripts/pip-install.sh VENV EXTRAS
# Skips the install when a stamp file says these extras were installed from the current
# pyproject.toml; on failure prints the tail of pip's log instead of pip's usual wall of text.
# A first install takes a minute or two: every PIP_PROGRESS_EVERY seconds (default 10) it prints
# one line with the elapsed time and what pip is doing, so it never looks hung.
set -euo pipefail

venv="$1"
extras="$2"
stamp="$venv/.nbagents-installed-${extras//,/-}"
every="${PIP_PROGRESS_EVERY:-10}"

if [[ -f "$stamp" && "$stamp" -nt pyproject.toml && -x "$venv/bin/python" ]]; then
    echo "pip: .[$extras] already installed in $venv"
    exit 0
fi

log="$venv/pip-${extras//,/-}.log"
echo "pip: installing -e .[$extras] into $venv (first time: 1-3 minutes; log: $log)"
start=$(date +%s)
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off \
    -e ".[$extras]" >"$log" 2>&1 &
pip_pid=$!
trap 'kill "$pip_pid" 2>/dev/null || true' INT TERM

# The last "Collecting x" / "Building wheel for x" / "Installing collected packages" line
# says what pip is doing without repeating its whole log.
doing() {
    local line
    line=$(grep -E '^(Collecting|Downloading|Building|Installing|Obtaining)' "$log" 2>/dev/null \
        | tail -n 1)
    if [[ "$line" == "Installing collected packages:"* ]]; then
        echo "installing $(tr ',' '\n' <<<"${line#*:}" | grep -c .) packages into the venv"
    else
        cut -c1-80 <<<"$line" | sed 's/^Collecting /resolving /'
    fi
}

last_report=$start
while kill -0 "$pip_pid" 2>/dev/null; do
    sleep 1
    now=$(date +%s)
    if (( now - last_report >= every )) && kill -0 "$pip_pid" 2>/dev/null; then
        echo "pip: $((now - start)) s: $(doing)"
        last_report=$now
    fi
done

if ! wait "$pip_pid"; then
    echo "pip: ERROR: install of .[$extras] failed after $(($(date +%s) - start)) s;" \
        "last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
echo "pip: installed .[$extras] in $(($(date +%s) - start)) s"
touch "$stamp"
