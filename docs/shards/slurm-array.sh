#!/bin/bash
# A Slurm job array: one shard per array task, then a merge job that waits for all of them.
# sbatch docs/shards/slurm-array.sh   (from the repository, on a shared file system)
#SBATCH --job-name=guitest-shard
#SBATCH --array=1-3
#SBATCH --cpus-per-task=4
#SBATCH --output=shard-%a.log
set -u
pytest suites/screenspot_pro --model=openai:MODEL --base-url=http://vllm-node:8000/v1 -n 4 \
    --shard="${SLURM_ARRAY_TASK_ID}/3" --report-dir="shard-${SLURM_ARRAY_TASK_ID}"
status=$?
# the first task submits the merge, to run once every task of the array has ended
if [ "${SLURM_ARRAY_TASK_ID}" = "1" ]; then
    sbatch --dependency="afterany:${SLURM_ARRAY_JOB_ID}" --job-name=guitest-merge --output=merge.log \
        --wrap="guitest merge shard-*/screenspot_pro.json --report-dir=reports"
fi
[ $status -eq 0 ] || [ $status -eq 10 ]   # a shard's failed gate is not the verdict: the merge's is
