#!/usr/bin/env bash
# On a CUDA host: build the Megopolis repository's resample_test from
# a checkout carried in peers/Megopolis (megopolis_build.sh), then run
# bench/peers/megopolis_repo.py with the extra arguments. The CSV goes to OUT_DIR.
set -euo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/megopolis_peer.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
mkdir -p "$out/results"
bash bench/device/megopolis_build.sh
python3 bench/peers/megopolis_repo.py --binary peers/Megopolis/target/resample_test \
    --csv "$out/results/megopolis_repo.csv" "$@"
