"""Running clusterbench as a real unprivileged process (uid and gid 65534)
from a suite that runs as root, or as the user a suite runs as otherwise.

The interpreter may live where that user may not read (a pyenv under
/root): everything the commands import lazily is imported first, as root,
by CLI_SCRIPT, which then drops to 65534 and runs the CLI."""
from __future__ import annotations

import os

NOBODY = 65534

CLI_SCRIPT = """
import os, sys
import difflib   # click's parser imports it for every option it does not know (a kernel's parameters)
import importlib.resources, pickle
import rich.console, rich.table, clusterbench.output.console
import clusterbench.store.engine, clusterbench.store.rows_alchemy, sqlalchemy.dialects.sqlite  # a store read as read-only
import clusterbench.cli, clusterbench.commands.run, clusterbench.run.runner, clusterbench.run.each_condition
import clusterbench.conditions.apply, clusterbench.catalogue, clusterbench.suites, clusterbench.run.plan
import clusterbench.run.cluster.use_case, clusterbench.run.cluster.execute, clusterbench.analysis.cluster.analysis
import clusterbench.commands.list_runs, clusterbench.commands.show, clusterbench.commands.clean, pwd
import clusterbench.store.storable   # its unicodedata (a label of invisible characters is refused)
import clusterbench.catalogue as c
c.load()
import clusterbench.results.sizes
clusterbench.results.sizes.parse_size("64m")   # its lazy import of fractions (rich's progress bar imported it before, #24)
clusterbench.suites.shipped()
# imports done; from here on a real unprivileged process
if os.geteuid() == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
sys.argv = ["clusterbench", *sys.argv[1:]]
clusterbench.cli.main()
"""


def drop_root() -> None:
    """preexec_fn: the child runs as 65534 when the suite runs as root."""
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
