#!/usr/bin/env bash
# Issue 21's last device call: the Rejection tail pass's GPU tests, its probe (lane group x
# cap factor on the growth filter), Tables 6.2-6.3 at 16 x 10 with it, and meanwhile the
# CPU-only ablations on the spare cores (CPU_ABLATIONS=1). Carry .whl.
# Usage on the device: [TESTS="pytest -k expression"] bash bench/device/issue21_final.sh
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null
cpu=
if [[ -n ${CPU_ABLATIONS:-} ]]; then  # the CPU-only ablations on the spare cores meanwhile
    bash bench/device/cpu_ablations.sh >"$OUT/cpu_ablations.log" 2>&1 &
    cpu=$!
fi
if python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py \
        -k "${TESTS:-rejection or lane_group or queue or parity}" >"$OUT/tests.txt" 2>&1; then
    tail -3 "$OUT/tests.txt"
    python3 bench/device/rejection_filter_probe.py 2>&1 | tee "$OUT/probe.log" | grep -v "^2^" || true
    grep "factor auto" "$OUT/probe.log" || true
    TABLES="6_2 6_3" bash bench/device/filter_tables.sh "${TABLES_TIMEOUT:-300}"
else
    tail -40 "$OUT/tests.txt"
fi
if [[ -n $cpu ]]; then
    wait "$cpu"
    tail -75 "$OUT/cpu_ablations.log"
fi
# Everything in one archive (the device tool returns a few files only).
(cd "$OUT" && tar czf /tmp/issue21_final.tgz . && find . -type f -delete && mv /tmp/issue21_final.tgz .)
