#!/usr/bin/env bash
# Quiet, idempotent `uv pip install -e .[EXTRAS]` (or `-r REQUIREMENTS`) into a venv.
#   scripts/pip-install.sh VENV EXTRAS
#   scripts/pip-install.sh VENV -r REQUIREMENTS_FILE
# The installer is uv, taken from the package index into the venv (`pip install uv`, once, a few
# seconds); pip installs instead where uv cannot be had (NBAGENTS_INSTALLER=pip forces it).
# WHEELHOUSE=DIR (or an http:// URL serving it) installs from that folder only (`make wheelhouse`
# fills it), with no package index.
# Skips the install when a stamp file says this was installed from the current pyproject.toml
# (or requirements file); on failure prints the tail of the installer's log instead of its wall
# of text. Every PIP_PROGRESS_EVERY seconds (default 10) it prints one line with the elapsed time
# and what the installer is doing, so a slow first install never looks hung.
set -euo pipefail

venv="$1"
every="${PIP_PROGRESS_EVERY:-10}"
if [[ "$2" == "-r" ]]; then
    source_file="$3"
    what="-r $source_file"
    slug="$(basename "$source_file" .txt)"
    install=(-r "$source_file")
else
    source_file=pyproject.toml
    what="-e .[$2]"
    slug="${2//,/-}"
    install=(-e ".[$2]")
fi
stamp="$venv/.nbagents-installed-$slug"

if [[ -f "$stamp" && "$stamp" -nt "$source_file" && -x "$venv/bin/python" ]]; then
    echo "install: $what already installed in $venv"
    exit 0
fi

# Where packages come from: the package index, or only the wheelhouse.
sources=()
# A URL is a wheelhouse served on the room's network (`python -m http.server` in the folder).
if [[ "${WHEELHOUSE:-}" == http://* || "${WHEELHOUSE:-}" == https://* ]]; then
    sources=(--no-index --find-links "$WHEELHOUSE")
elif [[ -n "${WHEELHOUSE:-}" ]]; then
    if [[ ! -d "$WHEELHOUSE" ]]; then
        echo "install: ERROR: WHEELHOUSE=$WHEELHOUSE is not a folder (make wheelhouse fills one)" >&2
        exit 1
    fi
    sources=(--no-index --find-links "$(cd "$WHEELHOUSE" && pwd)")
fi

pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)
# `make` makes the venv without pip (ensurepip is the slowest part of making one): pip comes only
# where it is needed, and uv installs it for the notebooks' `%pip`.
ensure_pip() {
    "$venv/bin/python" -m pip --version >/dev/null 2>&1 \
        || "$venv/bin/python" -m ensurepip --default-pip >"$venv/ensurepip.log" 2>&1
}

# uv, from the index (or the wheelhouse) into the venv: its own copy, whatever else is on PATH.
# The interpreter that made the venv installs it with its pip (`pip --python`, pip >= 22.3);
# else the venv's own pip does.
uv="$venv/bin/uv"
if [[ "${NBAGENTS_INSTALLER:-uv}" != pip && ! -x "$uv" ]]; then
    quiet=(--disable-pip-version-check --no-input install -q --progress-bar off "${sources[@]}" uv)
    { "${PYTHON:-python3}" -m pip --python "$venv/bin/python" "${quiet[@]}" \
        || { ensure_pip && "$venv/bin/python" -m pip "${quiet[@]}"; }; } >"$venv/uv-install.log" 2>&1 \
        || true
    if [[ ! -x "$uv" ]]; then
        echo "install: uv is not to be had ($(grep -E 'ERROR|rror:' "$venv/uv-install.log" \
            | tail -n 1 | cut -c1-100)); installing with pip, which is slower"
    fi
fi
offline_first=()
if [[ "${NBAGENTS_INSTALLER:-uv}" != pip && -x "$uv" ]]; then
    installer=uv
    # the venv's own python, whichever venv is active in the calling shell; pip for `%pip`
    command=("$uv" pip install --python "$venv/bin/python" "${sources[@]}")
    install+=(pip)
    # With a warm cache, uv resolves from it alone in a few seconds instead of asking the index
    # about every package; whatever is missing there sends it to the index after all.
    # NBAGENTS_OFFLINE_FIRST=0 asks the index every time (the newest versions).
    if [[ -z "${WHEELHOUSE:-}" && "${NBAGENTS_OFFLINE_FIRST:-1}" != 0 ]]; then
        offline_first=(--offline)
    fi
else
    installer=pip
    ensure_pip
    command=("${pip[@]}" install --progress-bar off "${sources[@]}")
fi

# Before it was renamed jupyter-nbagents, this project was installed as `nbagents`, the name of an
# unrelated PyPI project; an installer would keep such an editable install of this clone beside
# the new one, as a second distribution of the `nbagents` package, so it goes first.
if [[ "$source_file" == pyproject.toml ]] && "$venv/bin/python" -I -c '
import importlib.metadata as m, json, pathlib, sys
here = pathlib.Path(sys.argv[1]).resolve().as_uri()
old = [json.loads(d.read_text("direct_url.json") or "{}") for d in m.distributions(name="nbagents")]
sys.exit(0 if any(d.get("url") == here for d in old) else 1)' "$PWD"; then
    echo "install: removing the editable install of this clone under its old name, nbagents"
    if [[ $installer == uv ]]; then
        "$uv" pip uninstall --python "$venv/bin/python" -q nbagents
    else
        "${pip[@]}" uninstall -y -q nbagents
    fi
fi

log="$venv/pip-$slug.log"
from=${WHEELHOUSE:+" from $WHEELHOUSE"}
echo "$installer: installing $what into $venv$from (log: $log)"
start=$(date +%s)
{
    if (( ${#offline_first[@]} )); then
        "${command[@]}" "${offline_first[@]}" "${install[@]}" \
            || { echo "-- not all in uv's cache: from the package index"; false; }
    else
        false
    fi || "${command[@]}" "${install[@]}"
} >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' INT TERM

# The installer's last progress line says what it is doing without repeating its whole log:
# pip's "Collecting x" / "Installing collected packages", uv's "Resolved/Prepared N packages".
doing() {
    local line
    line=$(grep -E '^ *(Collecting|Downloading|Building|Installing|Obtaining|Resolved|Prepared|Built|Downloaded)' \
        "$log" 2>/dev/null | tail -n 1)
    if [[ "$line" == "Installing collected packages:"* ]]; then
        echo "installing $(tr ',' '\n' <<<"${line#*:}" | grep -c .) packages into the venv"
    elif [[ -z "$line" ]]; then
        echo "resolving and downloading"  # uv says nothing until it has resolved
    else
        cut -c1-80 <<<"${line# }" | sed 's/^Collecting /resolving /'
    fi
}

last_report=$start
while kill -0 "$pid" 2>/dev/null; do
    sleep 0.2
    now=$(date +%s)
    if (( now - last_report >= every )) && kill -0 "$pid" 2>/dev/null; then
        echo "$installer: $((now - start)) s: $(doing)"
        last_report=$now
    fi
done

if ! wait "$pid"; then
    echo "$installer: ERROR: install of $what failed after $(($(date +%s) - start)) s;" \
        "last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
echo "$installer: installed $what in $(($(date +%s) - start)) s"
touch "$stamp"
