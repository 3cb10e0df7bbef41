#!/usr/bin/env bash
# The binary's face: --version names the version and commit, an unknown
# subcommand is a usage error (exit 2), help works.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$("$NESTFAST" --version)
[[ "$version" =~ ^nestfast\ [0-9]+\.[0-9]+\.[0-9]+\ \(git\ [0-9a-f]{7,}|unknown\) ]] || fail "unexpected --version output: $version"

"$NESTFAST" --help | grep -c "presets" >/dev/null || fail "--help does not list the presets subcommand"

set +e
"$NESTFAST" no-such-command >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "unknown subcommand exited $rc, expected 2"
echo "cli e2e: ok"
