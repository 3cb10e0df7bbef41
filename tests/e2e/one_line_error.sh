# Sourced by the end-to-end tests that check refusals (not run); the caller
# defines fail.

# Runs a command that must fail: exit code $1, and stderr must be exactly one
# line containing $2. Never a hang: bounded by timeout.
expect_one_line_error() {
  local code=$1 pattern=$2
  shift 2
  local rc=0
  timeout 120 "$@" >out.txt 2>err.txt || rc=$?
  [ "$rc" -ne 124 ] || fail "hung (timeout): $*"
  [ "$rc" -eq "$code" ] || { cat err.txt >&2; fail "exit $rc, expected $code: $*"; }
  [ "$(wc -l < err.txt)" -eq 1 ] || { cat err.txt >&2; fail "stderr is not one line: $*"; }
  grep -q -- "$pattern" err.txt || { cat err.txt >&2; fail "stderr lacks '$pattern': $*"; }
}
