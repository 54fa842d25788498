#!/usr/bin/env bash
# The one GPU job, in one device call: every GPU test, then the single-source benchmark
# (bench/single_source.py), exact BC and k-sampled BC (bench/exact_gpu.py). Logs and JSON
# records go to $OUT (default ./gpu_out). Run from the repository root:
#   bash bench/gpu_check.sh [pytest args...]
# BENCH_ONLY=1 skips the tests; SINGLE=0, EXACT=0 or SAMPLED=0 skips a benchmark; EXACT_ARGS,
# SAMPLED_ARGS and BENCH_ARGS pass arguments to them. BEFORE_DIR=<an older tree> times
# COMPARE_GRAPHS (exact BC) there and here in the same run, into $OUT/before and $OUT/after.
# Wheels in .whl/ (python-graphblas and friends) are installed first when present; real
# graphs come from the large data set, when present beside the checkout (../shared/data), or
# from .gpudata/ when that is what was carried.
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
[ -f .gpudata/COMMIT ] && export TURBOBC_COMMIT=$(cat .gpudata/COMMIT)
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv \
    | tee "$OUT/env.txt"
python3 -c "import cupy; print('cupy', cupy.__version__, 'runtime', cupy.cuda.runtime.runtimeGetVersion())" | tee -a "$OUT/env.txt"

status=0
BENCH_ONLY=${BENCH_ONLY:-0}
if [ "$BENCH_ONLY" != 1 ]; then
    # The deep-grid cases build a big-integer reference in a module fixture (about 50 s of
    # CPU): run them in one process after the rest, so that no xdist worker repeats it.
    timeout ${TEST_TIMEOUT:-330} python3 -m pytest -q -m gpu -p no:cacheprovider -p no:benchmark -n 8 \
        --durations=15 -k "not deep_grid" "$@" tests 2>&1 | tee "$OUT/tests.log" | tail -n 60
    status=$?
    timeout ${SERIAL_TIMEOUT:-240} python3 -m pytest -q -m gpu -p no:cacheprovider -p no:benchmark \
        -k deep_grid tests/test_overflow.py 2>&1 | tee "$OUT/tests_serial.log" | tail -n 30
    sstatus=$?
    [ $status -eq 0 ] && status=$sstatus
fi
bstatus=0
if [ "${SINGLE:-1}" != 0 ]; then
    timeout ${BENCH_TIMEOUT:-200} python3 bench/single_source.py --out "$OUT/single_source.json" \
        ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log"
    bstatus=$?
fi
if [ "${EXACT:-1}" != 0 ]; then
    timeout ${EXACT_TIMEOUT:-240} python3 bench/exact_gpu.py --out "$OUT" ${EXACT_ARGS:-} 2>&1 \
        | tee "$OUT/exact_gpu.log"
    estatus=$?
    [ $bstatus -eq 0 ] && bstatus=$estatus
fi
if [ "${SAMPLED:-1}" != 0 ]; then  # k-sampled BC on million-vertex graphs (k / B sweeps)
    timeout ${SAMPLED_TIMEOUT:-120} python3 bench/exact_gpu.py --out "$OUT" \
        --sampled ${SAMPLED_ARGS:-kron20:1000} 2>&1 | tee "$OUT/sampled_gpu.log"
    sstatus=$?
    [ $bstatus -eq 0 ] && bstatus=$sstatus
fi
if [ -n "${BEFORE_DIR:-}" ] && [ -d "$BEFORE_DIR" ]; then
    # The same exact-BC graphs on an older tree (bench/exact_gpu.py of that tree, carried as
    # BEFORE_DIR), then on this one, in the same run: before/after ratios on one device.
    for side in before after; do
        dir=$PWD; [ $side = before ] && dir=$BEFORE_DIR
        mkdir -p "$OUT/$side"
        (cd "$dir" && PYTHONPATH=/tmp/site:$dir timeout ${COMPARE_TIMEOUT:-200} python3 \
            bench/exact_gpu.py --out "$OUT/$side" --graphs ${COMPARE_GRAPHS:-ego-Facebook myc14 kron18}) \
            2>&1 | tee "$OUT/$side/exact_gpu.log" | tail -n 12
    done
fi
if [ -n "${BENCH_BPS:-}" ]; then  # the same on fewer resident blocks per SM (barrier cost)
    for bps in $BENCH_BPS; do
        timeout 120 python3 bench/single_source.py --blocks-per-sm $bps --repeats 5 \
            --graphs ${BPS_GRAPHS:-road340 del16 ego-Facebook} --out "$OUT/bps$bps.json" \
            2>&1 | tail -n 5
    done
fi
echo "tests exit $status, bench exit $bstatus"
[ $status -eq 0 ] && [ $bstatus -eq 0 ]
