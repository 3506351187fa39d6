#!/usr/bin/env bash
# On a CUDA host: the quality-time frontier from one run. Installs the
# package; builds the Megopolis repository's resample_test (megopolis_build.sh)
# where a checkout is carried in peers/Megopolis and no binary is there yet, and
# adds its points through --peer-binary (without a checkout the figure has none);
# runs bench/frontier.py with the extra arguments (pass --commit <hash>: the
# device's copy of the tree has no git history); draws the figure.
# OUT_DIR gets frontier.csv, frontier.log and frontier.png.
set -euo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/frontier.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
binary=peers/Megopolis/target/resample_test
if [ ! -x "$binary" ] && [ -d peers/Megopolis/src ]; then
    bash bench/device/megopolis_build.sh
fi
peer=()
if [ -x "$binary" ]; then
    peer=(--peer-binary "$binary")
else
    echo "frontier.sh: no peers/Megopolis checkout, so no peer points"
fi
echo "frontier.sh: ${SECONDS} s before the run"
PYTHONUNBUFFERED=1 python3 bench/frontier.py --backend cuda "${peer[@]}" \
    --csv "$out/frontier.csv" "$@" 2>&1 | tee "$out/frontier.log"
python3 bench/frontier_figure.py --csv "$out/frontier.csv" --out "$out/frontier.png"
echo "frontier.sh: ${SECONDS} s in all"
