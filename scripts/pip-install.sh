#!/usr/bin/env bash
# Quiet, idempotent `pip install -e .[EXTRAS]` (or `-r REQUIREMENTS`) into a venv.
#   scripts/pip-install.sh VENV EXTRAS
#   scripts/pip-install.sh VENV -r REQUIREMENTS_FILE
# Skips the install when a stamp file says this was installed from the current pyproject.toml
# (or requirements file); on failure prints the tail of pip's log instead of pip's wall of text.
# A first install takes a minute or two: every PIP_PROGRESS_EVERY seconds (default 10) it prints
# one line with the elapsed time and what pip is doing, so it never looks hung.
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
    echo "pip: $what already installed in $venv"
    exit 0
fi

# Before it was renamed jupyter-nbagents, this project was installed as `nbagents`, the name of an
# unrelated PyPI project; pip would keep such an editable install of this clone beside the new
# one, as a second distribution of the `nbagents` package, so it goes first.
if [[ "$source_file" == pyproject.toml ]] && "$venv/bin/python" -I -c '
import importlib.metadata as m, json, pathlib, sys
here = pathlib.Path(sys.argv[1]).resolve().as_uri()
old = [json.loads(d.read_text("direct_url.json") or "{}") for d in m.distributions(name="nbagents")]
sys.exit(0 if any(d.get("url") == here for d in old) else 1)' "$PWD"; then
    echo "pip: removing the editable install of this clone under its old name, nbagents"
    "$venv/bin/python" -m pip uninstall --disable-pip-version-check -y -q nbagents
fi

log="$venv/pip-$slug.log"
echo "pip: installing $what into $venv (first time: 1-3 minutes; log: $log)"
start=$(date +%s)
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off \
    "${install[@]}" >"$log" 2>&1 &
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
    echo "pip: ERROR: install of $what failed after $(($(date +%s) - start)) s;" \
        "last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
echo "pip: installed $what in $(($(date +%s) - start)) s"
touch "$stamp"
