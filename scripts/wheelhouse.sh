#!/usr/bin/env bash
# Every wheel `-e .[EXTRAS]` needs, in one folder, for a room with no network.
#   scripts/wheelhouse.sh VENV DIR EXTRAS
# uv resolves the set for VENV's Python and platform (DIR/requirements.txt), pip downloads each
# wheel (or builds one from an sdist) into DIR, with uv itself, setuptools (to build this clone's
# editable install) and nbagents' own wheel. Then, on a machine with the same Python and
# platform and no network: `make lab WHEELHOUSE=DIR`, or
# `pip install --no-index --find-links DIR "jupyter-nbagents[lab]"` without the clone.
set -euo pipefail

venv="$1"
dir="$2"
extras="$3"
start=$(date +%s)
mkdir -p "$dir"
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)
log="$venv/wheelhouse.log"
: >"$log"

fail() {
    echo "wheelhouse: ERROR: $1; last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
}

# pip downloads and builds the wheels: the venv `make` made has none yet
"$venv/bin/python" -m pip --version >/dev/null 2>&1 \
    || "$venv/bin/python" -m ensurepip --default-pip >>"$log" 2>&1 || fail "no pip in $venv"
[[ -x "$venv/bin/uv" ]] || "${pip[@]}" install -q uv >>"$log" 2>&1 || fail "could not install uv"
python_version=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
echo "wheelhouse: resolving .[$extras] for Python $python_version on $(uname -sm)"
# setuptools: the build backend pyproject.toml names, which an editable install of the clone
# fetches into its isolated build environment
"$venv/bin/uv" pip compile --quiet --python "$venv/bin/python" --no-header --no-annotate \
    pyproject.toml $(printf -- '--extra %s ' ${extras//,/ }) \
    <(printf 'uv\npip\nsetuptools>=77\n') -o "$dir/requirements.txt" >>"$log" 2>&1 \
    || fail "could not resolve .[$extras]"
count=$(grep -c '^[a-zA-Z0-9]' "$dir/requirements.txt")
echo "wheelhouse: downloading $count wheels into $dir (building any that come only as sources)"
"${pip[@]}" wheel --progress-bar off --no-deps -w "$dir" -r "$dir/requirements.txt" >>"$log" 2>&1 \
    || fail "could not download every wheel"
"${pip[@]}" wheel --progress-bar off --no-deps --no-build-isolation -w "$dir" . >>"$log" 2>&1 \
    || "${pip[@]}" wheel --progress-bar off --no-deps -w "$dir" . >>"$log" 2>&1 \
    || fail "could not build nbagents' own wheel"
echo "wheelhouse: $(find "$dir" -name '*.whl' | wc -l) wheels, $(du -sh "$dir" | cut -f1), in" \
    "$(($(date +%s) - start)) s; install with: make lab WHEELHOUSE=$dir"
