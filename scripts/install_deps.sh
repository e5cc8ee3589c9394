#!/usr/bin/env bash
# Installs the Debian 12 packages trainsim needs; does nothing when all are present.
# Idempotent: safe to run before every build.
set -euo pipefail
packages=(
  ca-certificates g++ cmake make pkg-config git
  libboost-dev libboost-graph-dev libboost-program-options-dev libboost-math-dev
  libeigen3-dev libceres-dev catch2 nlohmann-json3-dev
  libsimgrid-dev libns3-dev
  python3 python3-numpy python3-scipy
  # sweep across machines (optional in CMake; tests run `mpirun -np 2`)
  libopenmpi-dev openmpi-bin
  # fuzzing in CI (tests/fuzz): clang with libFuzzer and the sanitizer runtimes
  clang libclang-rt-14-dev
  # notebooks/ are executed by the tests (jupyter nbconvert --execute)
  jupyter-nbconvert python3-ipykernel python3-matplotlib python3-pandas
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install_deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "install_deps: need root to apt-get install: ${missing[*]}" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
