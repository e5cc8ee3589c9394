#!/usr/bin/env bash
# Installs what is missing, configures and builds trainsim (Release) into build/.
# Environment: BUILD_DIR (default build), TRAINSIM_WERROR (ON|OFF, default OFF),
# TRAINSIM_SANITIZE (ON|OFF), TRAINSIM_BUILD_BENCH (ON|OFF, default ON), BUILD_TYPE (default
# Release), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  -DTRAINSIM_WERROR="${TRAINSIM_WERROR:-OFF}" -DTRAINSIM_SANITIZE="${TRAINSIM_SANITIZE:-OFF}" \
  -DTRAINSIM_BUILD_BENCH="${TRAINSIM_BUILD_BENCH:-ON}" >/dev/null
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}"
