#!/usr/bin/env bash
# On a CUDA host: build chapter 4's cuCollections peer (bench/peers/cuco_hash.cu, ours)
# against the user's cuCollections checkout carried in peers/cuCollections (git-ignored;
# header-only, its include/ is all that is used) into peers/cuCollections/target/cuco_hash.
# bench/moazeni2013_ch4_peers.py runs it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
peer=peers/cuCollections
mkdir -p "$peer/target"
nvcc --version | tail -1
cat "$peer/COMMIT" 2>/dev/null || echo "no COMMIT file in $peer"
nvcc -std=c++17 -O3 -arch=sm_90 --expt-extended-lambda --expt-relaxed-constexpr \
    -include bench/peers/cccl3_shim.h -I "$peer/include" \
    -o "$peer/target/cuco_hash" bench/peers/cuco_hash.cu
