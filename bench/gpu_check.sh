#!/usr/bin/env bash
# The one GPU job, in one device call: every GPU test, then the single-source benchmark
# (bench/single_source.py), exact BC and k-sampled BC (bench/exact_gpu.py). Logs and JSON
# records go to $OUT (default ./gpu_out). Run from the repository root:
#   bash bench/gpu_check.sh [pytest args...]
# BENCH_ONLY=1 skips the tests; TEST_PATHS narrows them (default: tests), TEST_WORKERS sets
# pytest's -n (8), TEST_GPUS=N deals those workers over N GPUs; SERIAL=0 skips the
# serial deep-grid cases; DASK=1 adds bench/dask_scaling.py (DASK_ARGS; two GPUs by default,
# issue 34's four: DASK_ARGS="--workers 1 2 4 --graphs kron20 road-luxembourg-osm.mtx.gz
# --sources kron20:131072 --chunk-sources kron20:4096"; each graph runs first without Dask on
# GPU 0 for the record's local_seconds, so DASK_TIMEOUT must allow for it), run first after the
# tests; DASK_CPU_ARGS="--cpu-cores 16 --workers 1 2 4 --graphs ..." the same on a CPU
# LocalCluster (DASK_CPU_ENGINE: graphblas by default, or cpu); FAMILIES="GRAPH:K ..." the
# GPU's lanes and queue families for unweighted BC on the same sources (exact_gpu.py
# --families); APPROX="GRAPH ..." approximate
# BC against NetworKit's KADABRA (bench/approx_gpu.py, APPROX_ARGS); WEIGHTED="GRAPH:K ..." adds the weighted-vs-unweighted comparison with
# NetworKit beside it (exact_gpu.py --weighted, WEIGHTED_ARGS; record weighted_gpu);
# CPU_WEIGHTED="GRAPH ..." the graphblas engine's weighted and edge BC against NetworKit on the
# host's cores (bench/cpu_weighted.py); CPU_THREADS="GRAPH ..." the graphblas engine's batches
# spread over threads against NetworKit (bench/cpu_threads.py);
# CPU_ENGINE="GRAPH ..." (or "all": issue 35's graphs) the compiled CPU engine against NetworKit
# on the host's cores, unweighted, weighted and approximate against KADABRA, the first call timed
# apart (bench/cpu_engine.py, CPU_ENGINE_ARGS; record cpu_engine); SINGLE=0,
# CHAINS="GRAPH ..." exact BC with and without chain folding (bench/chain_folding.py);
# EDGE_FOLD="GRAPH ..." exact edge BC with and without the trees folded, vertex BC beside it
# (bench/edge_folding.py);
# BLOCKS="GRAPH ..." weighted distances per block against rounds (bench/weighted_distances.py,
# BLOCKS_ARGS);
# MEMORY="25 26" the memory suite on those Kronecker scales (python -m bench memory --scales,
# bench/memory.py: bytes per stored edge, time per source and peak device memory against the
# models for single-source, k-sampled and approximate (epsilon = 0.01) BC, int32 indices
# beside int64 pointers past 2^31 stored edges; a scale may name its edge factor, "26:72" (9.2
# billion stored edges); TURBOBC_MEMORY_STEPS="sampled approx" names the steps beside the
# single source; MEMORY_BUDGET seconds for the suite, default 420, MEMORY_TIMEOUT 540; record
# memory-*.json in $OUT, rewritten after each point). kron26 wants an H200 and about 64 GB of
# host memory, 26:72 about 150 GB (a 4-GPU host): one scale a call;
# EXACT=0 or SAMPLED=0 skips a benchmark; EXACT_ARGS, SAMPLED_ARGS and BENCH_ARGS pass
# arguments to them. The exact run also times edge BC beside vertex BC on up to 8192 sources
# of each graph (the edge_* fields of its record, issue 13's 1.3x target; EXACT_ARGS=--no-edges
# skips it, --edge-sources K changes K), hence its EXACT_TIMEOUT of 330 s (240 before); the
# before/after comparison times vertex BC only.
# HOUSE=<an older tree> times the same public calls on it and on this tree, turn about
# (bench/house_compare.py, HOUSE_ARGS; record house_compare; HOUSE_ARGS="--single-source
# myc16 kron18 sw100000 del16 road340 ego-Facebook --only-single --rounds 4": the
# single-source suites of both trees in the same turns). DEEP="GRAPH ..." the deep graphs
# beside hybrid_BC (bench/deep_vs_hybrid.py; the binary from HYBRID_BC, default
# .peers/hybrid_bc when carried; DEEP_ARGS; record deep_vs_hybrid). FAMILY="GRAPH ..." (or
# "all": bench/family_choice.py's own list) times "auto" against every GPU family forced
# (FAMILY_ARGS, FAMILY_TIMEOUT; record family_choice; bench/family_rates.py fits the rates).
# BEFORE_DIR=<an older tree> measures that tree and this one in the same run, into $OUT/before
# and $OUT/after: a person's first call against the tenth (this tree's bench/cold_start.py
# for both, GPU families only, with PYTHONPATH at the tree measured), the single-source suite on COMPARE_SINGLE_GRAPHS and exact
# BC on COMPARE_GRAPHS (each tree's own bench/single_source.py and bench/exact_gpu.py). The
# plain SINGLE, EXACT and SAMPLED runs are then off unless asked for (=1): the "after" side
# repeats them. Budget (H100): BENCH_ONLY=1 with BEFORE_DIR took 3.9 minutes (per side:
# compile_time 50 s, single-source 20 s, exact 45 s; cold_start takes 20 s a side with the
# shipped kernels, 2 to 3 minutes without), and each step has a timeout, per side:
# COMPILE_TIMEOUT 240 s, COMPARE_SINGLE_TIMEOUT 80 s, COMPARE_TIMEOUT 100 s. COMPILE=0 skips
# the cold-start step.
# $BEFORE_DIR/COMMIT, when present, names the older tree's commit in its records.
# The device's copy of the tree carries a .git that is not this checkout's: pass
# TURBOBC_COMMIT=$(git rev-parse HEAD) (typed into the command) so records name the commit.
# Wheels in .whl/ (python-graphblas and friends) are installed first when present; real
# graphs come from the large data set, when present beside the checkout (../shared/data), or
# from .gpudata/ when that is what was carried.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
if [ -d .whl ] && [ ! -f /tmp/site/.turbobc-wheels ]; then  # bench/gpu_lanes.sh installs once
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    touch /tmp/site/.turbobc-wheels
    export PYTHONPATH=/tmp/site:$PWD
elif [ -d .whl ]; then
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
COMPARE=0
if [ -n "${BEFORE_DIR:-}" ]; then
    if [ -d "$BEFORE_DIR" ]; then
        COMPARE=1
        BEFORE_DIR=$(cd "$BEFORE_DIR" && pwd)
        SINGLE=${SINGLE:-0} EXACT=${EXACT:-0} SAMPLED=${SAMPLED:-0}
    else
        echo "BEFORE_DIR=$BEFORE_DIR is not a folder: no before/after comparison"
    fi
fi
if [ -n "${TEST_GPUS:-}" ]; then  # TEST_GPUS=4: the xdist workers dealt over 4 GPUs (conftest)
    export TURBOBC_TEST_GPUS=$TEST_GPUS
fi
if [ "$BENCH_ONLY" != 1 ]; then
    # The deep-grid cases build a big-integer reference in a module fixture (about 50 s of
    # CPU): run them in one process after the rest, so that no xdist worker repeats it.
    # -v: one line per finished test in the log, so a run cut by its timeout still names
    # every failure; the screen gets the failures and the summary. --dist worksteal: a worker
    # that runs out takes queued tests from the others (call 10: 40 workers on 4 H200s, the
    # last heavy overflow cases ran one after another on three workers past the 410 s limit).
    timeout ${TEST_TIMEOUT:-330} python3 -m pytest -v -rf --tb=short -m gpu -p no:cacheprovider \
        -p no:benchmark -n ${TEST_WORKERS:-8} --dist ${TEST_DIST:-worksteal} --durations=15 \
        -k "not deep_grid" "$@" ${TEST_PATHS:-tests} \
        > "$OUT/tests.log" 2>&1
    status=$?
    grep -E "(FAILED|ERROR) " "$OUT/tests.log" | sort -u | head -n 80
    tail -n 40 "$OUT/tests.log"
    if [ "${SERIAL:-1}" != 0 ]; then  # SERIAL=0 skips the deep-grid cases
        timeout ${SERIAL_TIMEOUT:-240} python3 -m pytest -q -m gpu -p no:cacheprovider -p no:benchmark \
            -k deep_grid tests/test_overflow.py 2>&1 | tee "$OUT/tests_serial.log" | tail -n 30
        sstatus=$?
        [ $status -eq 0 ] && status=$sstatus
    fi
fi
bstatus=0
if [ "${DASK:-0}" != 0 ]; then  # DASK=1: 1, 2 (, 4) GPU workers through Dask, and none
    # the record (dask_scaling, cluster gpu): seconds, speedup, local_seconds (the call without
    # Dask on GPU 0), first_chunk_seconds and start_seconds with their split, the busiest
    # worker's chunk seconds, balance, what was folded (folded, chain_folded, chains)
    nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader 2>/dev/null | head -n 8
    timeout ${DASK_TIMEOUT:-300} python3 bench/dask_scaling.py --out "$OUT" ${DASK_ARGS:-} \
        2>&1 | grep -v "distributed\.\(nanny\|scheduler\|worker\|core\|http\)" \
        | tee "$OUT/dask_scaling.log" | tail -n 20
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] dask_scaling done"
fi
if [ -n "${DASK_CPU_ARGS:-}" ]; then  # a CPU LocalCluster (graphblas or cpu workers), 1 2 4 ...
    timeout ${DASK_CPU_TIMEOUT:-150} python3 bench/dask_scaling.py --out "$OUT" \
        --engine "${DASK_CPU_ENGINE:-graphblas}" \
        $DASK_CPU_ARGS 2>&1 | grep -v "distributed\.\(nanny\|scheduler\|worker\|core\|http\)" \
        | tee "$OUT/dask_scaling_cpu.log" | tail -n 12
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] dask_scaling (CPU cluster) done"
fi
if [ -n "${FAMILIES:-}" ]; then  # FAMILIES="GRAPH:K ...": lanes vs queue family (unweighted)
    timeout ${FAMILIES_TIMEOUT:-200} python3 bench/exact_gpu.py --out "$OUT" --families $FAMILIES \
        ${FAMILIES_ARGS:-} 2>&1 | tee "$OUT/families.log" | tail -n 12
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] families done"
fi
if [ -n "${APPROX:-}" ]; then  # APPROX="GRAPH ...": bc(epsilon=) against NetworKit's KADABRA
    timeout ${APPROX_TIMEOUT:-200} python3 bench/approx_gpu.py --out "$OUT" --graphs $APPROX \
        ${APPROX_ARGS:-} 2>&1 | tee "$OUT/approx.log" | tail -n 12
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] approx done"
fi
if [ -n "${CPU_WEIGHTED:-}" ]; then  # CPU_WEIGHTED="GRAPH ...": the CPU engine's weighted and edge
    # BC against NetworKit on this host's cores (bench/cpu_weighted.py; record cpu_weighted)
    timeout ${CPU_WEIGHTED_TIMEOUT:-240} python3 bench/cpu_weighted.py --out "$OUT" --graphs $CPU_WEIGHTED \
        ${CPU_WEIGHTED_ARGS:-} 2>&1 | tee "$OUT/cpu_weighted.log" | tail -n 6
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] cpu_weighted done"
fi
if [ -n "${CPU_ENGINE:-}" ]; then  # CPU_ENGINE="GRAPH ..." or "all": bench/cpu_engine.py on
    # this host's cores (numba and NetworKit on the same threads)
    graphs_args=""
    [ "$CPU_ENGINE" != all ] && graphs_args="--unweighted $CPU_ENGINE --weighted $CPU_ENGINE --approx $CPU_ENGINE"
    timeout ${CPU_ENGINE_TIMEOUT:-480} python3 bench/cpu_engine.py --out "$OUT" $graphs_args \
        ${CPU_ENGINE_ARGS:-} 2>&1 | tee "$OUT/cpu_engine.log" | tail -n 20
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] cpu_engine done"
fi
if [ -n "${CPU_THREADS:-}" ]; then  # CPU_THREADS="GRAPH ...": bench/cpu_threads.py on this host
    timeout ${CPU_THREADS_TIMEOUT:-300} python3 bench/cpu_threads.py --out "$OUT" $CPU_THREADS \
        2>&1 | tee "$OUT/cpu_threads.log" | tail -n 8
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] cpu_threads done"
fi
if [ -n "${MEMORY:-}" ]; then  # MEMORY="25 26": the memory suite on those Kronecker scales
    timeout ${MEMORY_TIMEOUT:-540} python3 -m bench memory --scales $MEMORY \
        --budget ${MEMORY_BUDGET:-420} --out "$OUT" 2>&1 | tee "$OUT/memory.log" | tail -n 16
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] memory done"
fi
if [ -n "${CHAINS:-}" ]; then  # CHAINS="GRAPH ...": exact BC with and without chain folding,
    # GPU and CPU engine, NetworKit on this host's cores beside the CPU (bench/chain_folding.py)
    timeout ${CHAINS_TIMEOUT:-300} python3 bench/chain_folding.py --out "$OUT" $CHAINS \
        ${CHAINS_ARGS:-} 2>&1 | tee "$OUT/chain_folding.log" | tail -n 14
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] chain_folding done"
fi
if [ -n "${EDGE_FOLD:-}" ]; then  # EDGE_FOLD="GRAPH ...": edge BC with and without the trees
    # folded, vertex BC beside it (bench/edge_folding.py)
    timeout ${EDGE_FOLD_TIMEOUT:-240} python3 bench/edge_folding.py --out "$OUT" $EDGE_FOLD \
        2>&1 | tee "$OUT/edge_folding.log" | tail -n 8
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] edge_folding done"
fi
if [ -n "${BLOCKS:-}" ]; then  # BLOCKS="GRAPH ...": weighted distances a source per block in
    # shared memory against rounds over the batch (bench/weighted_distances.py)
    timeout ${BLOCKS_TIMEOUT:-200} python3 bench/weighted_distances.py --out "$OUT" $BLOCKS ${BLOCKS_ARGS:-} \
        2>&1 | tee "$OUT/weighted_distances.log" | tail -n 8
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] weighted_distances done"
fi
if [ -n "${WEIGHTED:-}" ]; then  # WEIGHTED="GRAPH:K ...": weighted vs unweighted (+ NetworKit)
    timeout ${WEIGHTED_TIMEOUT:-200} python3 bench/exact_gpu.py --out "$OUT" --weighted $WEIGHTED \
        ${WEIGHTED_ARGS:-} 2>&1 | tee "$OUT/weighted_gpu.log" | tail -n 30
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] weighted done"
fi
if [ -n "${HOUSE:-}" ]; then  # HOUSE=<older tree>: public calls on both trees, turn about
    timeout ${HOUSE_TIMEOUT:-400} python3 bench/house_compare.py --tree before="$HOUSE" --tree after=. \
        --out "$OUT" ${HOUSE_ARGS:-} 2>&1 | tee "$OUT/house_compare.log" | tail -n 20
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] house_compare done"
fi
if [ -n "${DEEP:-}" ]; then  # DEEP="GRAPH ...": the GPU families beside hybrid_BC
    hybrid=${HYBRID_BC:-.peers/hybrid_bc}
    timeout ${DEEP_TIMEOUT:-400} python3 bench/deep_vs_hybrid.py --graphs $DEEP \
        $([ -x "$hybrid" ] && echo --hybrid "$hybrid") --out "$OUT" ${DEEP_ARGS:-} 2>&1 \
        | tee "$OUT/deep_vs_hybrid.log" | tail -n 20
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] deep_vs_hybrid done"
fi
if [ -n "${FAMILY:-}" ]; then  # FAMILY="GRAPH ..." (or "all"): "auto" against each family
    timeout ${FAMILY_TIMEOUT:-400} python3 bench/family_choice.py \
        $([ "$FAMILY" != all ] && echo --graphs $FAMILY) --out "$OUT" ${FAMILY_ARGS:-} 2>&1 \
        | tee "$OUT/family_choice.log" | tail -n 32
    [ $? -eq 0 ] || bstatus=1
    echo "[gpu_check ${SECONDS} s] family_choice done"
fi
if [ "${SINGLE:-1}" != 0 ]; then
    timeout ${BENCH_TIMEOUT:-200} python3 bench/single_source.py --out "$OUT/single_source.json" \
        ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log"
    bstatus=$?
fi
if [ "${EXACT:-1}" != 0 ]; then
    timeout ${EXACT_TIMEOUT:-330} python3 bench/exact_gpu.py --out "$OUT" ${EXACT_ARGS:-} 2>&1 \
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
if [ $COMPARE = 1 ]; then
    # An older tree (carried as BEFORE_DIR), then this one, in the same run: before/after
    # ratios on one device. Compile time: this tree's script, the measured tree on PYTHONPATH.
    here=$PWD
    after_commit=${TURBOBC_COMMIT:-}
    before_commit=$(cat "$BEFORE_DIR/COMMIT" 2>/dev/null || echo "before-tree")
    for side in before after; do
        dir=$here; commit=$after_commit
        [ $side = before ] && dir=$BEFORE_DIR && commit=$before_commit
        mkdir -p "$OUT/$side"
        ctime=${COMPILE_TIMEOUT:-240}
        if [ "${COMPILE:-1}" != 0 ]; then  # COMPILE=0: no cold-start step
            (cd "$dir" && export PYTHONPATH=/tmp/site:$dir TURBOBC_COMMIT=$commit \
                && timeout $ctime python3 "$here/bench/cold_start.py" --out "$OUT/$side" \
                    --label $side --cases lanes frontiers layers single approximate edge) \
                2>&1 | tee "$OUT/$side/cold_start.log" | tail -n 12
            [ $? -eq 0 ] || bstatus=1
            echo "[gpu_check ${SECONDS} s] $side: cold_start done"
        fi
        if [ -f "$dir/bench/single_source.py" ]; then
            (cd "$dir" && export PYTHONPATH=/tmp/site:$dir TURBOBC_COMMIT=$commit \
                && timeout ${COMPARE_SINGLE_TIMEOUT:-80} python3 bench/single_source.py \
                    --out "$OUT/$side/single_source.json" --graphs \
                    ${COMPARE_SINGLE_GRAPHS:-myc16 kron18 sw100000 del16 road340 ego-Facebook}) \
                2>&1 | tee "$OUT/$side/single_source.log" | tail -n 9
            [ $? -eq 0 ] || bstatus=1
            echo "[gpu_check ${SECONDS} s] $side: single_source done"
        else
            echo "$side: no bench/single_source.py in $dir: single-source suite skipped"
        fi
        (cd "$dir" && export PYTHONPATH=/tmp/site:$dir TURBOBC_COMMIT=$commit \
            && timeout ${COMPARE_TIMEOUT:-100} python3 bench/exact_gpu.py --out "$OUT/$side" \
                --graphs ${COMPARE_GRAPHS:-ego-Facebook myc14 kron18} \
                $(grep -q -- "--no-edges" bench/exact_gpu.py && echo --no-edges)) \
            2>&1 | tee "$OUT/$side/exact_gpu.log" | tail -n 12
        [ $? -eq 0 ] || bstatus=1
        echo "[gpu_check ${SECONDS} s] $side: exact_gpu done"
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
