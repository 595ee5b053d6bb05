#!/usr/bin/env bash
# Run one named step of a build, printing its name, its duration and its exit status.
#   scripts/step.sh NAME COMMAND [ARGS...]
set -uo pipefail
name="$1"
shift
echo "==> $name"
start=$(date +%s)
"$@"
rc=$?
echo "<== $name: $([[ $rc -eq 0 ]] && echo ok || echo "FAILED (exit $rc)") in $(($(date +%s) - start)) s"
exit "$rc"
