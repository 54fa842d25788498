#!/usr/bin/env bash
# Several bench/gpu_check.sh jobs side by side on one multi-GPU host, in one device call.
# Each lane is an environment variable LANE0 .. LANE7 holding the assignments of one job, for
# example
#   LANE0='CUDA_VISIBLE_DEVICES=0 BENCH_ONLY=1 MEMORY=25'
#   LANE1='CUDA_VISIBLE_DEVICES=1 CORES=48-63 BENCH_ONLY=1 SINGLE=0 EXACT=0 SAMPLED=0 CPU_ENGINE=all'
# CORES pins a lane to those CPU cores (taskset). Each lane writes under $OUT/laneK (its log in
# $OUT/laneK.log), and the folders end in one archive, $OUT/lanes.tar.gz (the device tool
# brings back at most 8 files); the wheels in .whl/ are installed once before the lanes start.
# The call fails when any lane fails. Run from the repository root: bash bench/gpu_lanes.sh
set -o pipefail
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
if [ -d .whl ] && [ ! -f /tmp/site/.turbobc-wheels ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    touch /tmp/site/.turbobc-wheels
fi
pids=()
lanes=()
for k in 0 1 2 3 4 5 6 7; do
    var="LANE$k"
    [ -n "${!var:-}" ] || continue
    (
        eval "export ${!var}"
        export OUT="$OUT/lane$k"
        pin=()
        [ -n "${CORES:-}" ] && pin=(taskset -c "$CORES")
        "${pin[@]}" bash bench/gpu_check.sh
    ) > "$OUT/lane$k.log" 2>&1 &
    pids+=($!)
    lanes+=($k)
    echo "lane $k: ${!var}"
done
status=0
for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    rc=$?
    echo "=== lane ${lanes[$i]} exit $rc (${SECONDS} s) ==="
    tail -n 25 "$OUT/lane${lanes[$i]}.log"
    [ $rc -eq 0 ] || status=1
done
# the device tool brings back at most 8 files: every lane's folder in one archive
if [ ${#lanes[@]} -gt 0 ]; then
    (cd "$OUT" && tar czf lanes.tar.gz $(printf "lane%s " "${lanes[@]}") \
        && rm -rf $(printf "lane%s " "${lanes[@]}"))
fi
exit $status
