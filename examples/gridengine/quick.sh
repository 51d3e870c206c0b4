#!/bin/bash
# A clusterbench run as an ordinary Grid Engine batch job: two slots of the
# `mpi` parallel environment. Submit from the repository after `bash scripts/setup.sh`:
#     qsub examples/gridengine/quick.sh
# Results go to the store named by $CLUSTERBENCH_DB (default: the user's store);
# `clusterbench list` shows the runs with the job's label and its batch job.
#$ -N clusterbench
#$ -S /bin/bash
#$ -pe mpi 2
#$ -cwd
#$ -V
#$ -j y
#$ -o clusterbench.$JOB_ID.out
set -euo pipefail
CB=${CLUSTERBENCH:-.venv/bin/clusterbench}
# the job's PATH is the execution daemon's, not the submitter's: put the
# directory holding clusterbench, cbk and mpiexec first
export PATH="$(cd "$(dirname "$CB")" && pwd):$PATH"

# inside the job, mpiexec starts the ranks in the granted slots ($PE_HOSTFILE)
"$CB" run mpi --launcher mpiexec --np "$NSLOTS" --label "sge-$JOB_ID" \
    --repeat 3 --op=pingpong --sizes=8,64k --iterations=200
"$CB" run stream --label "sge-$JOB_ID" --repeat 3 --array-size=8m
