#!/usr/bin/env bash
# The batched engine's GPU job, one device call: its GPU tests (and, unless TESTS is set
# otherwise, every GPU test), then exact BC on the issue-4 graphs (bench/exact_gpu.py).
# Logs and the JSON record go to $OUT (default ./gpu_out). Run from the repository root:
#   bash bench/gpu_batched_check.sh [exact_gpu.py args...]
# Wheels in .whl/ (python-graphblas, tqdm, ...) are installed first when present; real graphs
# are read from ../shared/data, or from .gpudata/ when that is what was carried.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
if [ ! -d ../shared/data ] && [ -d .gpudata ]; then
    mkdir -p ../shared && ln -sfn "$PWD/.gpudata" ../shared/data
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/env.txt"

status=0
TESTS=${TESTS:-tests}
if [ "$TESTS" != none ]; then
    timeout ${TEST_TIMEOUT:-300} python3 -m pytest -q -m gpu -p no:cacheprovider -p no:benchmark \
        -n ${WORKERS:-8} --durations=15 $TESTS 2>&1 | tee "$OUT/tests.log" | tail -n 60
    status=$?
fi
timeout ${BENCH_TIMEOUT:-240} python3 bench/exact_gpu.py --out "$OUT" "$@" 2>&1 \
    | tee "$OUT/exact_gpu.log"
bstatus=$?
echo "tests exit $status, bench exit $bstatus"
[ $status -eq 0 ] && [ $bstatus -eq 0 ]
