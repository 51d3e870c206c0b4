"""Which batch job this process runs in, from the variables the schedulers
set: 'slurm 1234' (or 'slurm 1234_7' for an array task), 'sge 5678' (or
'sge 5678.3'), 'pbs 42.server'; None outside a batch job."""
from __future__ import annotations

import os
from typing import Mapping


def current(env: Mapping[str, str] = os.environ) -> str | None:
    if env.get("SLURM_JOB_ID"):
        task = env.get("SLURM_ARRAY_TASK_ID")
        job = env.get("SLURM_ARRAY_JOB_ID") if task else env["SLURM_JOB_ID"]
        return f"slurm {job}_{task}" if task else f"slurm {job}"
    if env.get("JOB_ID") and env.get("SGE_ROOT"):  # JOB_ID alone is too common a name
        task = env.get("SGE_TASK_ID")
        return f"sge {env['JOB_ID']}.{task}" if task and task != "undefined" else f"sge {env['JOB_ID']}"
    if env.get("PBS_JOBID"):
        return f"pbs {env['PBS_JOBID']}"
    return None
