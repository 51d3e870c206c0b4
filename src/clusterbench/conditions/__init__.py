"""Run conditions: what clusterbench changes around a run and undoes after.

- `--memory-limit SIZE`: the kernel's processes run in a memory cgroup
  capped at SIZE on every rank's host (cgroup.py, cgexec.py).
- `--setting NAME=VALUE`: a system setting (sysctl, tuned profile, CPU
  governor, transparent huge pages, the target disk's I/O scheduler and
  read-ahead) changed for the run and restored after (settings.py), with
  the old values written to a journal first (journal.py), so a killed run
  is undone by the next clusterbench command or `clusterbench clean`.
- spec.py parses both from the command line and suites; apply.py applies
  them around a run and holds the runner's hooks; recipe.py runs one suite
  under several conditions and compares them (E5).

This package's __init__ imports nothing: the per-rank wrapper imports
cgroup.py on every node and should start fast.
"""
