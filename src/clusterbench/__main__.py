"""Where `python -m clusterbench` and the `clusterbench` script start. The
command line (click, rich, the registry) takes a tenth of a second or more
to import, before any stop handler is installed: a Ctrl-C then printed a
traceback of whichever module was being imported, 20 lines ending in
KeyboardInterrupt (half of the Ctrl-Cs sent in `list`'s first 0.3 s).
Here it is the one line every stop is, and exit 130. Standard library
only: nothing else is imported yet."""
from __future__ import annotations

import signal
import sys


def main() -> None:
    try:
        from clusterbench.cli import main as command_line
    except KeyboardInterrupt:
        # only Ctrl-C raises this early (SIGTERM and SIGHUP end the process as they end any)
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # said once: nothing is left to stop
        sys.stderr.write("clusterbench: interrupted by SIGINT\n")
        sys.exit(128 + signal.SIGINT)
    command_line()


if __name__ == "__main__":
    main()
