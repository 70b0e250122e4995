#!/usr/bin/env bash
# Wall-time test: run.wall_time_limit shorter than the run. The campaign must stop by itself with
# exit 75 and a checkpoint before the limit (the run's own wall time is measured here), every
# start with the same limit must make progress, and the chain of --resume starts must end with
# the accuracy numbers of the uninterrupted run ($4), bit for bit. The limit is 35% of the
# uninterrupted run's wall time (report.json), so that it stops however fast the machine is.
#   run_wall_time.sh MANTISSA_CMD DECK OUTPUT_DIR REFERENCE_RUN_DIR
set -euo pipefail
read -r -a cmd <<<"$1"
deck=$2 out=$3 ref=$4
limit=$(/usr/bin/python3 -c 'import json,sys; print("%.3f" % max(0.35 * json.load(open(sys.argv[1]))["context"]["wall_seconds"], 0.5))' "$ref/report.json")
echo "run.wall_time_limit=$limit s"
args=(run "$deck" run.output_dir="$out" run.name=walltime run.wall_time_limit="$limit")
set +e
t0=$(date +%s.%N)
"${cmd[@]}" "${args[@]}" --overwrite
rc=$?
t1=$(date +%s.%N)
set -e
echo "first start: exit $rc after $(/usr/bin/python3 -c "print('%.2f' % ($t1 - $t0))") s"
if [ "$rc" -ne 75 ]; then echo "expected exit 75 (stopped by run.wall_time_limit with a checkpoint), got $rc"; exit 1; fi
test -f "$out/walltime/checkpoints/latest" || { echo "no checkpoint written"; exit 1; }
test ! -f "$out/walltime/report.json" || { echo "a stopped run must not write report.json"; exit 1; }
grep -q "run.wall_time_limit" "$out/walltime/run.log" || { echo "run.log does not say that run.wall_time_limit stopped it"; exit 1; }
starts=1
while [ "$starts" -lt 40 ]; do
  set +e
  "${cmd[@]}" "${args[@]}" --resume
  rc=$?
  set -e
  starts=$((starts + 1))
  [ "$rc" -eq 0 ] && break
  if [ "$rc" -ne 75 ]; then echo "start $starts: exit $rc (expected 0 or 75)"; exit 1; fi
done
echo "finished after $starts starts"
[ "$rc" -eq 0 ] || { echo "no end after $starts starts: a start made no progress"; exit 1; }
/usr/bin/python3 "$(dirname "$0")/check_report.py" "$out/walltime" --against "$ref"
