#!/usr/bin/env bash
# check_planted.sh PROGRAM: the sanitizer build must end PROGRAM (planted.cc) with exit code 86 and
# the matching report for each planted bug, and with 0 when nothing is planted.
set -u
prog="$1"
fail=0
expect() {  # expect MODE CODE REPORT
  local err rc
  err="$("$prog" "$1" 2>&1 >/dev/null)"
  rc=$?
  if [ "$rc" != "$2" ] || ! grep -q -- "$3" <<<"$err"; then
    echo "planted '$1': expected exit $2 and a report containing '$3', got exit $rc:"
    echo "$err" | tail -5
    fail=1
  else
    echo "planted '$1': exit $rc, '$3' reported"
  fi
}
expect none 0 ""
expect leak 86 "LeakSanitizer: detected memory leaks"
expect ub 86 "runtime error: signed integer overflow"
exit $fail
