#!/usr/bin/env bash
# Prints the gist of a failed sanitizer test run, short enough to be the last lines CI shows:
# the report's first line and summary, the top frames of each of its stacks (demangled), and
# the tests that had started and not finished when the process stopped.
# Usage: scripts/sanitizer-summary.sh LOG
set -uo pipefail
log=${1:?usage: sanitizer-summary.sh LOG}
[[ -f $log ]] || { echo "sanitizer-summary: no log at $log"; exit 0; }

demangle() {
  if command -v swift > /dev/null; then swift demangle --simplified --compact 2> /dev/null || cat; else cat; fi
}

echo "== sanitizer report, condensed (whole log: $log)"
# The report: from ASan's ERROR or TSan's WARNING line to its SUMMARY line, the test process's
# own first (a child process's report, quoted in a test's issue with a prefix, only if there
# is no other). Each stack's heading, then its first frames as "function file:line" (6 for
# the first stack, 4 for the others; the sanitizer's, the Swift runtime's and libc's own
# frames skipped). ASan frames read "#0 0xADDR in FUNCTION FILE:LINE", TSan's
# "#0 FUNCTION FILE:LINE (MODULE+0xOFFSET)".
report=$(awk '
  { gsub(/\033\[[0-9;]*m/, "") }
  function start() { inside = 1; stacks = 0; frames = 0; out = $0 "\n" }
  !inside && /^==[0-9]+==ERROR: |^WARNING: ThreadSanitizer/ { start(); own = 1; next }
  !inside && !quoted && /==[0-9]+==ERROR: |WARNING: ThreadSanitizer/ {
    match($0, /==[0-9]+==ERROR: |WARNING: ThreadSanitizer/)
    $0 = substr($0, RSTART); quoted = 1; start(); next
  }
  !inside { next }
  # A quoted report: drop the quoting (swift-testing starts each line with an arrow).
  { if (!own) sub(/^[^ -~]+ ?/, "", $0) }
  /SUMMARY: [A-Za-z]+Sanitizer/ {
    out = out $0 "\n"; inside = 0
    if (own) { printf "%s", out; done = 1; exit }
    kept = out; next
  }
  /^Thread T[0-9]+.* created by / { frames = 99; next }
  /^ *#[0-9]+ / && /asan_[a-z_]+\.cpp|tsan_[a-z_]+\.cpp|libswiftCore\.so|\/libc\.so|libc[-_]start|pthread_create\.c/ { next }
  /^ *#[0-9]+ / {
    if (frames < (stacks <= 1 ? 6 : 4)) {
      line = $0
      sub(/^ *#[0-9]+ (0x[0-9a-f]+ )?(in )?/, "", line)
      sub(/ \(BuildId: [0-9a-f]+\)$/, "", line)
      sub(/ \([^ ]*\+0x[0-9a-f]+\)$/, "", line)
      n = split(line, parts, " "); where = parts[n]; sub(/.*\//, "", where)
      out = out "    " parts[1] (n > 1 ? " " where : "") "\n"
    }
    frames++; next
  }
  /^(READ|WRITE|freed by|previously allocated|allocated by|  (Read|Write|Previous|Atomic)|  Location|  Mutex)/ {
    stacks++; frames = 0; out = out $0 "\n"
  }
  END { if (!done) printf "%s", (kept != "" ? kept : out) }
' "$log")
if [[ -n $report ]]; then
  printf '%s\n' "$report" | demangle | cut -c1-150 | head -n 26
else
  echo "    no sanitizer report in the log (a test failed or the run stopped otherwise)"
  # The failed tests' issues instead: each issue's first line (where and what), at most 8.
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^[^ ]* Test .* recorded an issue' | head -n 8 | cut -c1-300 \
    | sed 's/^[^ ]* /    failed: /'
fi

# Tests started and not finished, the likely culprits. swift-testing prints "Test NAME
# started." and "Test NAME passed|failed after N seconds" (symbols and colours vary);
# a parameterized test's cases print no end of their own, and its end reads "Test NAME with N
# test cases passed after ...".
awk '
  { gsub(/\033\[[0-9;]*m/, "") }
  / Test .* started\.$/ && !/ Test run started| Test case / {
    name = $0; sub(/^[^ ]* Test /, "", name); sub(/ started\.$/, "", name); open[name] = NR; next
  }
  / Test .* (passed|failed) after [0-9.]+ seconds/ {
    name = $0; sub(/^[^ ]* Test /, "", name); sub(/( with [0-9]+ test cases?)? (passed|failed) after [0-9.]+ seconds.*$/, "", name)
    delete open[name]
  }
  END { for (name in open) print open[name] "\t" name }
' "$log" | sort -n | tail -n 4 | cut -f2 | cut -c1-140 | sed 's/^/    running: /'
exit 0
