#!/bin/bash
# Submit campaign.sbatch sized from the deck: as many ranks as the deck's mesh.process_grid
# names (MANTISSA_RANKS when it is "auto", default 2), MANTISSA_THREADS OpenMP threads per rank
# (default 1). Further sbatch options go in SBATCH_ARGS (e.g. "--time=02:00:00 -p gpu").
#   scripts/slurm/submit.sh DECK [key=value ...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DECK="${1:?usage: submit.sh DECK [key=value ...]}"
MANTISSA="${MANTISSA:-mantissa}"
summary="$("$MANTISSA" check "$@")"
grid="$(sed -n 's/.* ranks \(.*\)$/\1/p' <<<"$summary" | tr -d ' ')"
if [[ "$grid" =~ ^[0-9x]+$ ]]; then ranks=$(( ${grid//x/*} )); else ranks="${MANTISSA_RANKS:-2}"; fi
threads="${MANTISSA_THREADS:-1}"
read -r -a extra <<<"${SBATCH_ARGS:-}"
echo "submit.sh: $ranks ranks x $threads threads for $DECK"
exec sbatch --ntasks="$ranks" --cpus-per-task="$threads" "${extra[@]}" \
  --export="ALL,MANTISSA=$MANTISSA" "$here/campaign.sbatch" "$@"
