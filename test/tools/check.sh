# Sourced by test/adopt/run.sh and test/subproject/run.sh: one line per check, a count of
# failures in $failed (which the sourcing script sets to 0 and exits by).

# check DESCRIPTION COMMAND...: runs the command quietly, prints ok/FAIL with its output.
check() {
  local what=$1 output
  shift
  if output=$("$@" 2>&1); then
    echo "ok     $what"
  else
    echo "FAIL   $what"
    printf '%s\n' "$output" | tail -20 | sed 's/^/         /'
    failed=$((failed + 1))
  fi
}
