#!/usr/bin/env bash
# Quiet, idempotent `pip install -e .[EXTRAS]` into a venv.
#   scripts/pip-install.sh VENV EXTRAS
# Skips the install when a stamp file says these extras were installed from the current
# pyproject.toml; on failure prints the tail of pip's log instead of pip's usual wall of text.
set -euo pipefail

venv="$1"
extras="$2"
stamp="$venv/.nbagents-installed-${extras//,/-}"

if [[ -f "$stamp" && "$stamp" -nt pyproject.toml && -x "$venv/bin/python" ]]; then
    echo "pip: .[$extras] already installed in $venv"
    exit 0
fi

log="$venv/pip-${extras//,/-}.log"
echo "pip: installing -e .[$extras] into $venv (log: $log)"
if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off \
        -e ".[$extras]" >"$log" 2>&1; then
    echo "pip: ERROR: install of .[$extras] failed; last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
touch "$stamp"
