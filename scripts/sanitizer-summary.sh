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
# The report: from ASan's ERROR or TSan's WARNING line to its SUMMARY line. Each stack's
# heading, then its first frames as "function file:line" (6 for the first stack, 4 for the
# others; the sanitizer's, the Swift runtime's and libc's own frames skipped).
awk '
  /==[0-9]+==ERROR: |WARNING: ThreadSanitizer|runtime error: / && !inside { inside = 1; stacks = 0; print; next }
  !inside { next }
  /^SUMMARY: / { print; exit }
  /^Thread T[0-9]+.* created by / { frames = 99; next }
  /^ *#[0-9]+ / && /asan_[a-z_]+\.cpp|tsan_[a-z_]+\.cpp|libswiftCore\.so|\/libc\.so|libc[-_]start/ { next }
  /^ *#[0-9]+ / {
    if (frames < (stacks <= 1 ? 6 : 4)) {
      line = $0; sub(/^ *#[0-9]+ 0x[0-9a-f]+ (in )?/, "", line); sub(/ \(BuildId: [0-9a-f]+\)$/, "", line)
      n = split(line, parts, " "); where = parts[n]; sub(/.*\//, "", where)
      print "    " parts[1] " " where
    }
    frames++; next
  }
  /^(READ|WRITE|freed by|previously allocated|allocated by|  (Read|Write|Previous|Atomic)|  Location|  Mutex|  Thread T)/ {
    stacks++; frames = 0; print
  }
' "$log" | demangle | cut -c1-150 | head -n 26

# Tests started and not finished (swift-testing and XCTest lines; not the cases of a
# parameterized test, which print no end), the likely culprits.
awk '
  /^◇ Test case / { next }
  /^(◇ Test |Test Case ).* started\.$/ {
    name = $0; sub(/^(◇ Test |Test Case )/, "", name); sub(/ started\.$/, "", name); open[name] = NR; next
  }
  /^(✔ Test |✘ Test |↷ Test |Test Case ).* (passed|failed|skipped)/ {
    name = $0; sub(/^(✔ Test |✘ Test |↷ Test |Test Case )/, "", name); sub(/ (passed|failed|skipped).*$/, "", name)
    delete open[name]
  }
  END { delete open["run"]; for (name in open) print open[name] "\t" name }
' "$log" | sort -n | tail -n 4 | cut -f2 | sed 's/^/    running: /'
exit 0
