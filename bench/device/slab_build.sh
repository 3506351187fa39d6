#!/usr/bin/env bash
# On a CUDA host: build chapter 4's SlabHash peer (bench/peers/slab_hash.cu, ours) against
# the user's SlabHash checkout carried in peers/SlabHash (git-ignored; its src/, and its
# SlabAlloc submodule's src/ in peers/SlabHash/SlabAlloc) into
# peers/SlabHash/target/slab_hash. bench/moazeni2013_ch4_peers.py runs it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
peer=peers/SlabHash
mkdir -p "$peer/target"
nvcc --version | tail -1
cat "$peer/COMMIT" 2>/dev/null || echo "no COMMIT file in $peer"
nvcc -std=c++17 -O3 -arch=sm_90 -I "$peer/src" -I "$peer/SlabAlloc/src" \
    -o "$peer/target/slab_hash" bench/peers/slab_hash.cu
