"""What GPUs the batch system granted this job on this node, read from the
variables it sets: Grid Engine's resource map (SGE_HGR_<complex>), Slurm's
SLURM_STEP_GPUS / SLURM_JOB_GPUS, or a runtime's visibility variable. The
environment snapshot records it; launch/gpubind.py splits it between ranks."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from clusterbench.errors import BadInput

# Read in this order: a runtime's visibility variable, when a batch system
# set it, is already in the numbering the runtime understands.
SLURM_SOURCES = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "SLURM_STEP_GPUS",
                 "SLURM_JOB_GPUS")
PLAIN_SOURCES = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK")
# A device id: an index, or an NVIDIA GPU/MIG UUID (CUDA_VISIBLE_DEVICES takes both).
DEVICE_ID = re.compile(r"\d+|(?:GPU|MIG)-[0-9A-Za-z/-]+")

@dataclass(frozen=True)
class Grant:
    source: str                 # the variable the devices came from
    devices: tuple[str, ...]


def parse_devices(text: str, source: str) -> tuple[str, ...]:
    """"0 1", "0,1", "GPU-8f3c...,GPU-1a2b..." -> ids. Grid Engine writes
    spaces, Slurm and CUDA commas."""
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    bad = [t for t in tokens if not DEVICE_ID.fullmatch(t)]
    if bad or (source.startswith("SGE_HGR_") and not tokens):
        raise BadInput(f"{source}={text!r} is not a list of GPU ids "
                       "(expected indices such as '0 1' or '0,1', or GPU-/MIG- UUIDs)")
    if len(set(tokens)) != len(tokens):
        raise BadInput(f"{source}={text!r} names a GPU twice")
    return tuple(tokens)


def granted(environ: Mapping[str, str], sge_complex: str = "gpu") -> Grant | None:
    """The devices this job may use on this node, or None when nothing says."""
    sge = f"SGE_HGR_{sge_complex}"
    if sge in environ:
        return Grant(sge, parse_devices(environ[sge], sge))
    for var in SLURM_SOURCES if environ.get("SLURM_JOB_ID") else PLAIN_SOURCES:
        if var in environ:
            return Grant(var, parse_devices(environ[var], var))
    return None
