"""What tells each step of an imported run from its siblings, stored as a
measured step's is (steps.swept, store revision 0012; run/plan.py's
Step.swept): the parameters, rank count ("np") and ranks per node ("ppn")
whose values differ among the run's steps of one kernel, as an IMB file's
sections differ by benchmark and process count (["op", "np"]) and an IOR
file's tests by block size (["block-size"]); [] for a step with no sibling
(an OSU file's one step: its sizes are its samples' sweep, as mpi's
--sizes are). Left NULL, an imported step read as one stored before the
fact, and the reports read its name's bracket, which an IOR or mdtest
command line in the name may end in."""
from __future__ import annotations

from clusterbench.importers import ImportedStep


def swept(steps: list[ImportedStep]) -> list[list[str]]:
    """Each step's names, in the order of its first sibling's parameters; a
    parameter some siblings do not state (IMB's sync, given for collectives
    only) follows from the others and is not among them."""
    told = []
    for step in steps:
        siblings = [s for s in steps if s.kernel == step.kernel]
        if len(siblings) < 2:
            told.append([])
            continue
        names = [k for k in siblings[0].params
                 if all(k in s.params for s in siblings) and len({s.params[k] for s in siblings}) > 1]
        names += ["np"] if len({s.ranks for s in siblings}) > 1 else []
        names += ["ppn"] if len({s.ranks_per_node for s in siblings}) > 1 else []
        told.append(names)
    return told
