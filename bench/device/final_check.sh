#!/usr/bin/env bash
# On the lent GPU machine: the cumulative family's GPU tests (parity, bad
# weights, weight properties; TESTS picks others), then the Megopolis
# repository side by side (megopolis_peer.sh; peers/Megopolis carried).
# $OUT: log.txt, peer_raw.tar.gz, results/megopolis_repo.csv.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp/final_check}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== GPU tests (${SECONDS} s)"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu.py tests/test_weight_properties.py \
    tests/test_interop.py -k "${TESTS:-systematic or stratified or multinomial or bad or repeated_calls}" \
    2>&1 | tail -4
echo "== the Megopolis repository side by side (${SECONDS} s)"
OUT=$out bash bench/device/megopolis_peer.sh --sizes 4194304 16777216
(cd "$out/results" && tar czf ../peer_raw.tar.gz ./*_raw_* && rm -f ./*_raw_*)
echo "== done (${SECONDS} s)"
