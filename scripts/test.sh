#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through CTest.
# Environment (besides scripts/build.sh's): CTEST_EXCLUDE_LABELS, a ctest -LE regular expression
# of test labels to leave out (default: none; .ci/run's sanitizer pass sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exclude=()
if [ -n "${CTEST_EXCLUDE_LABELS:-}" ]; then exclude=(-LE "$CTEST_EXCLUDE_LABELS"); fi
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "${JOBS:-$(nproc)}" "${exclude[@]}"
