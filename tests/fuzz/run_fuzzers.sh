#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz/CMakeLists.txt) with clang and runs each for a
# bounded time, seeded from the project's own inputs: example scenarios, the plan catalog and
# every hardware profile (JSON), the reference and example CSVs, and the seeds in
# tests/fuzz/seeds. Exits non-zero when a harness finds a crash, a sanitizer report, an uncaught
# exception or a timeout; the input that did it is left in $BUILD_DIR/findings/ (turn it into a
# regression input under tests/fuzz/regressions/<harness>/, which the replay test runs).
# Environment: FUZZ_SECONDS per harness (default 25), BUILD_DIR (default build-fuzz),
# JOBS (default nproc). Without a clang that has -fsanitize=fuzzer it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-25}
cxx=${FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null ||
   ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
     "$cxx" -x c++ -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
  echo "run_fuzzers: no $cxx with -fsanitize=fuzzer (Debian 12: clang libclang-rt-14-dev); skipped"
  exit 0
fi
cmake -S tests/fuzz -B "$build" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}"

corpus=$build/corpus
findings=$build/findings
rm -rf "$corpus" "$findings"
mkdir -p "$findings"
for h in json_document quantity csv_points set_paths sweep_ranges; do mkdir -p "$corpus/$h"; done
cp examples/*.json "$corpus/json_document/"
find hw_profiles -name '*.json' -exec cp {} "$corpus/json_document/" \;
cp tests/reference_data/*.csv examples/*.csv "$corpus/csv_points/"
for h in quantity set_paths sweep_ranges; do cp tests/fuzz/seeds/$h/* "$corpus/$h/"; done
for h in json_document quantity csv_points set_paths sweep_ranges; do
  if [ -d "tests/fuzz/regressions/$h" ]; then cp tests/fuzz/regressions/$h/* "$corpus/$h/"; fi
done

# The harnesses run side by side, up to JOBS at a time (each is one single-threaded process),
# and are reported in order once all have finished.
jobs=${JOBS:-$(nproc)}
harnesses=(json_document quantity csv_points set_paths sweep_ranges)
declare -A pid
running=0
for h in "${harnesses[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  echo "=== fuzz_$h for ${seconds}s"
  mkdir -p "$findings/$h"
  # -timeout: one input taking longer than 10 s is a hang; -rss_limit_mb: memory blow-ups.
  "$build/fuzz_$h" "$corpus/$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/$h/" \
    >"$findings/$h.log" 2>&1 &
  pid[$h]=$!
  running=$((running + 1))
done
status=0
for h in "${harnesses[@]}"; do
  if ! wait "${pid[$h]}"; then
    echo "run_fuzzers: fuzz_$h found a problem; inputs in $findings/$h/:"
    ls "$findings/$h"
    tail -n 40 "$findings/$h.log"
    status=1
  else
    echo "fuzz_$h:"
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)" "$findings/$h.log" || true
  fi
done
exit $status
