#!/usr/bin/env bash
# Chapter 4's fair peers and the three ratios from one run on one host (one H100 or H200
# and its 16 cores), at most ~8 minutes (the steps' timeouts: 120 + 300 + 100 s, and the
# builds overlap the tests):
#
#   bash bench/device/moazeni2013_ch4_fair.sh OUT_DIR
#
# Needs the peers' sources in peers/ (git-ignored; carried): peers/cuCollections (its
# include/ and COMMIT), peers/SlabHash (src/, SlabAlloc/src, COMMIT), as
# bench/device/cuco_build.sh and slab_build.sh read them. Steps, each logged in OUT_DIR:
#   1. install the two packages; the byte-order tests on the GPU (NumPy = C++ = CUDA);
#   2. build cuco_hash and slab_hash (build.log);
#   3. bench/moazeni2013_ch4_peers.py at one load factor (0.5), 11 batches a structure:
#      peers.csv, peers.log;
#   4. bench/moazeni2013_ch4_best_cpu.py on the same host after it, its ratio 3 read from
#      step 3's peers.csv (ratios 1 and 2 its own): timings.csv, ratios.csv, best_cpu.log.
# OUT_DIR holds at most 8 files (the device tool's limit): host.txt, pytest.log, build.log,
# peers.csv, peers.log, timings.csv, ratios.csv, best_cpu.log.
set -uo pipefail
OUT="${1:?usage: bash bench/device/moazeni2013_ch4_fair.sh OUT_DIR}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONUNBUFFERED=1 PFRESAMPLE_NATIVE_CACHE=/tmp/pfresample-native
start=$(date +%s)
for d in peers/cuCollections/include peers/SlabHash/src peers/SlabHash/SlabAlloc/src; do
    [ -d "$d" ] || { echo "missing $d: carry peers/cuCollections and peers/SlabHash" | tee "$OUT/host.txt"; exit 2; }
done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name";
  nproc; date -u; echo "commit ${PFRESAMPLE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}";
  cat peers/cuCollections/COMMIT peers/SlabHash/COMMIT 2>/dev/null; } > "$OUT/host.txt" 2>&1

python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./studies > /dev/null 2>&1
# the builds in the background while the GPU tests run (the tests use one core)
( bash bench/device/cuco_build.sh; echo "cuco rc=$?"; bash bench/device/slab_build.sh;
  echo "slab rc=$?" ) > "$OUT/build.log" 2>&1 &
builds=$!
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_moazeni2013_hashtable.py \
    tests/studies/moazeni2013/test_moazeni2013_hashtable.py -k "byte_order or each_order or dek_fed or absent" \
    > "$OUT/pytest.log" 2>&1
echo "pytest rc=$? at $(( $(date +%s) - start )) s" >> "$OUT/host.txt"
wait "$builds"
echo "builds done at $(( $(date +%s) - start )) s" >> "$OUT/host.txt"

timeout 300 python3 bench/moazeni2013_ch4_peers.py --cuco peers/cuCollections/target/cuco_hash \
    --slab peers/SlabHash/target/slab_hash --out "$OUT" --load-factor 0.5 --repeats 11 \
    --deadline 250 > "$OUT/peers.log" 2>&1
echo "peers rc=$? at $(( $(date +%s) - start )) s" >> "$OUT/host.txt"

# the CPU sides alone on the host now (no other bench running): ratio 3 from this run's peers
timeout 100 python3 bench/moazeni2013_ch4_best_cpu.py --out "$OUT" --peers "$OUT/peers.csv" \
    --batches 262144 4096 --mixes 0 33 90 100 --gpu-hashes dek dek-msb mix \
    --deadline 60 > "$OUT/best_cpu.log" 2>&1
echo "best_cpu rc=$? at $(( $(date +%s) - start )) s" >> "$OUT/host.txt"
