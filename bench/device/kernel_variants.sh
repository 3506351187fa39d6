#!/usr/bin/env bash
# On a CUDA host: bench/gpu_resamplers.py for some methods on the
# kernels of the checkout ("base") and on variants of them, each a copy of
# gpu_kernels/ edited by a sed expression, so that a tuning choice is
# measured in one run on one device. CSVs go to $out/<variant>.csv.
#
#   bash bench/device/kernel_variants.sh OUT_DIR "metropolis metropolis-c1" "2^22 2^24" \
#       c1-batch8 metropolis.cu 's/MODE_ONCE ? 4 : 8/MODE_ONCE ? 8 : 8/'
#
# Arguments: methods, sizes, then triples (variant name, file, sed expression).
set -uo pipefail
out=$(realpath -m "${1:?usage: bash bench/device/kernel_variants.sh OUT_DIR ...}")
shift
mkdir -p "$out"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -2
methods=$1 sizes=$2
shift 2
mkdir -p "$out"
bench() {  # name, kernel folder
    echo "== $1"
    PFRESAMPLE_KERNEL_DIR=$2 python3 bench/gpu_resamplers.py --methods $methods --sizes $sizes \
        --distributions eq233-y4 --repeats 10 --csv "$out/$1.csv" 2>&1 |
        grep -E "^pfresample|copy" | head -40
}
bench base "$PWD/gpu_kernels"
while [ $# -ge 3 ]; do
    dir=$(mktemp -d)
    cp gpu_kernels/* "$dir/"
    sed -i "$3" "$dir/$2"
    cmp -s "gpu_kernels/$2" "$dir/$2" && echo "!! $1: the sed expression changed nothing"
    bench "$1" "$dir"
    shift 3
done
