#!/usr/bin/env bash
# Moazeni (2013) chapter 4 under Nsight Compute on one CUDA host: the memory traffic and
# time of one batch (2^18 operations, normal keys, 262,144 preloaded) of GPU_PH (320
# tables, DEK and mix), GPU_BASIC (mix), cuCollections' static_map (its three calls) and
# SlabHash (its one launch), 33 % and 100 % search; the peers' drivers built first
# (cuco_build.sh, slab_build.sh, from the checkouts in peers/).
#
#   bash bench/device/moazeni2013_ch4_ncu.sh OUT_DIR
#
# Writes OUT_DIR/ncu_<structure>_<mix>.csv (ncu's raw CSV, base units) and build.log.
# ncu's defaults stay (caches flushed before each replay pass, clocks locked to base),
# so its times are not free-running times: the traffic is what this run is for.
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/moazeni2013_ch4_ncu.sh OUT_DIR}")
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PYTHONPATH=$PWD/src:$PWD/studies${PYTHONPATH:+:$PYTHONPATH}
export PFRESAMPLE_KERNEL_DIR=${PFRESAMPLE_KERNEL_DIR:-$PWD/gpu_kernels}
{ bash bench/device/cuco_build.sh && bash bench/device/slab_build.sh; } > "$out/build.log" 2>&1
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum
ncu_run() {  # name, kernel regex, launches to skip, launches to profile, program ...
    local name=$1 regex=$2 skip=$3 count=$4; shift 4
    ncu --csv --log-file "$out/ncu_$name.csv" --print-units base --kernel-name-base demangled \
        --kernel-name "regex:$regex" --launch-skip "$skip" --launch-count "$count" \
        --metrics "$metrics" "$@" > "$out/run_$name.log" 2>&1
    echo "$name rc=$?"
}
for mix in 33 100; do
    python3 - "$out/batch_$mix.bin" "$mix" <<'PY'
import sys
import numpy as np
from pfresample_studies.moazeni2013 import hashtable_workloads as w
run = w.Run("gpu", 0, "normal", 0.05, "dek", "ph", 320, 2**18, int(sys.argv[2]))
pre, ops, keys = w.batch_keys(run, preload=w.PRELOAD, seed=2017)
with open(sys.argv[1], "wb") as f:
    f.write(np.array([pre.size, ops.size], dtype=np.uint64).tobytes())
    f.write(pre.astype(np.float32).tobytes() + ops.astype(np.uint8).tobytes()
            + keys.astype(np.float32).tobytes())
PY
    for spec in "ph320_dek 320 dek" "ph320_mix 320 mix" "basic_mix 1 mix"; do
        set -- $spec
        # the first ht_batch launch is the preload; the second is the batch
        ncu_run "$1_$mix" "ht_batch" 1 1 python3 - "$out/batch_$mix.bin" "$2" "$3" <<'PY'
import sys
import numpy as np
from pfresample_studies.moazeni2013 import hashtable_workloads as w
raw = open(sys.argv[1], "rb").read()
n_pre, n = np.frombuffer(raw[:16], dtype=np.uint64)
pre = np.frombuffer(raw[16:16 + 4 * n_pre], dtype=np.float32)
o = 16 + 4 * int(n_pre)
ops = np.frombuffer(raw[o:o + int(n)], dtype=np.uint8)
keys = np.frombuffer(raw[o + int(n):o + 5 * int(n)], dtype=np.float32)
r = w.run_gpu(int(sys.argv[2]), w.BUCKETS, pre, ops, keys, sys.argv[3])
print(r)
PY
    done
    # cuco: every kernel of the run (initialisation, the preload, then find, insert, erase
    # and the checks), told apart by name and order in the CSV
    ncu_run "cuco_$mix" "cuco" 0 12 peers/cuCollections/target/cuco_hash "$out/batch_$mix.bin" 0.5 1
    ncu_run "slab_$mix" "batched_operations" 0 1 peers/SlabHash/target/slab_hash "$out/batch_$mix.bin" 10 1
done
