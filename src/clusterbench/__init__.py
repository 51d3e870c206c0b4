"""clusterbench: performance evaluation of HPC clusters."""

__version__ = "0.1.0"
