"""The items an mdtest run's phases did and the shape of its directory tree:
the "2 tasks, 100 files/directories" line (the items of every rank) and the
command line's -z (depth), -b (branching), -I (items per directory), -L
(items in the leaves only), read as every mdtest reads them.

What makes the line not every phase's count:

- **Later iterations' directories.** mdtest keeps one global item count
  and changes it inside file creation (a stonewall hit, -W: the most any
  rank had created) or before the file phases (a count read from a
  stonewall status file, -x). Each iteration runs its directory phases
  first, so from the second iteration on they do the changed count: IOR
  4.0.0's `mdtest -n 200 -W 1 -w 1048576 -y -i 2 -P` made 400 directories
  in its first iteration and 266 (its hit's 133 x 2 ranks) in its second.
"""
from __future__ import annotations

from dataclasses import dataclass

from clusterbench.tools.ior_args import bytes_of
from clusterbench.tools.mdtest_args import COUNT, GRAMMAR, SIZE
from clusterbench.tools.option_tokens import tokens


@dataclass(frozen=True)
class Tree:
    depth: int = 0
    branching: int = 1
    items_per_dir_option: int = 0   # -I; 0: not given (mdtest spreads -n over the directories)
    leaf_only: bool = False

    @property
    def dirs(self) -> int:
        """Directories in one tree, its root included (mdtest's num_dirs_in_tree)."""
        if self.depth <= 0 or self.branching < 1:
            return 1
        if self.branching == 1:
            return self.depth + 1
        return (self.branching ** (self.depth + 1) - 1) // (self.branching - 1)

    @property
    def leaves(self) -> int:
        return self.branching ** self.depth if self.depth > 0 and self.branching >= 1 else 1

    def items_per_dir(self, items_per_rank: int | None) -> int | None:
        """Items in each directory that holds items."""
        if self.items_per_dir_option:
            return self.items_per_dir_option
        if items_per_rank is None:
            return None
        return items_per_rank // (self.leaves if self.leaf_only else self.dirs)

    def fields(self, items_per_rank: int | None) -> dict:
        per_dir = self.items_per_dir(items_per_rank)
        return {"tree_dirs": self.dirs, **({"items_per_dir": per_dir} if per_dir is not None else {})}


def tree_of(argv: list[str]) -> Tree:
    """The tree mdtest's options ask for; an option that does not read as a
    count keeps mdtest's default (mdtest would have refused the line)."""
    values: dict[str, object] = {}
    for opt, value in tokens(argv, GRAMMAR).options:
        if opt in ("-z", "-b") and COUNT.match(value or ""):
            values[opt] = int(value)
        elif opt == "-I" and SIZE.match(value or ""):   # -I 1k is 1024, as -n
            values[opt] = bytes_of(value)
        elif opt == "-L":
            values[opt] = True
    return Tree(int(values.get("-z", 0)), int(values.get("-b", 1)), int(values.get("-I", 0)),
                bool(values.get("-L", False)))


def dir_items_per_iteration(asked: int | None, iterations: int, file_counts_after: list[int]) -> list[int]:
    """The item counts the iterations' directory phases may have done: the
    first iteration -n's (the line's), a later one the count a file phase
    before it left in mdtest's global count (`file_counts_after`: each
    stonewall hit's, or the count read from the status file)."""
    done = [asked] if asked else []
    if iterations > 1:
        done += file_counts_after
    return done


def one_count(counts: list[int] | None, ranks: int) -> int | None:
    """Items per rank where every iteration did the same count."""
    if not counts or len(set(counts)) != 1:
        return None
    return counts[0] // ranks
