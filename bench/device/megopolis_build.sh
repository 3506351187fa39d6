#!/usr/bin/env bash
# On a CUDA host: build the Megopolis repository's resample_test from
# a checkout carried in peers/Megopolis (git-ignored; rapidjson's headers in its
# include/, as its README says) into peers/Megopolis/target/resample_test.
# megopolis_peer.sh and frontier.sh call it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
peer=peers/Megopolis
mkdir -p "$peer/target"
nvcc --version | tail -1
( cd "$peer" && nvcc -std=c++17 -O3 -use_fast_math -arch=sm_90 -w -o target/resample_test \
    src/benchmarks/resample_testing.cu )
