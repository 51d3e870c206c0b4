"""The items an mdtest run's phases did and the shape of its directory tree:
the "2 tasks, 100 files/directories" line (the items of every rank) and the
command line's -z (depth), -b (branching), -I (items per directory), -L
(items in the leaves only), read as every mdtest reads them.

Two things make the line not every phase's count:

- **Later iterations' directories.** mdtest keeps one global item count
  and changes it inside file creation (a stonewall hit, -W: the most any
  rank had created) or before the file phases (a count read from a
  stonewall status file, -x). Each iteration runs its directory phases
  first, so from the second iteration on they do the changed count: IOR
  4.0.0's `mdtest -n 200 -W 1 -w 1048576 -y -i 2 -P` made 400 directories
  in its first iteration and 266 (its hit's 133 x 2 ranks) in its second.
- **LLNL's mdtest before IOR took it in (1.8, 1.9.x) with -I and -L.** It
  counts -I items in every tree directory (`items = items_per_dir *
  num_dirs_in_tree`) but makes them only in the b^z leaves, and its rates
  are that count over the time (`items*size/(t[1] - t[0])`): -I 3 -z 2 -b 2
  -L on 2 ranks printed "2 tasks, 42 files" and made 24 (counted on disk
  after -C). IOR's mdtest 1.9.3 (IOR 3.2) and later count the leaves.
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


def llnl_leaf_factor(tree: Tree, llnl_format: bool) -> float | None:
    """The factor from LLNL mdtest's rates to the items it made (leaves over
    tree directories), where it counted items it never made; else None.
    `llnl_format`: the output has LLNL's "SUMMARY: (of N iterations)"."""
    if not (llnl_format and tree.leaf_only and tree.items_per_dir_option) or tree.leaves == tree.dirs:
        return None
    return tree.leaves / tree.dirs


def llnl_leaf_note(tree: Tree, ranks: int, items_line: str | None) -> str:
    printed = f"the line '{items_line}'" if items_line else "its item count"
    made = tree.items_per_dir_option * tree.leaves * ranks
    return (f"LLNL's mdtest with -I and -L counts -I items in each of the {tree.dirs} tree directories "
            f"({printed}) but makes them only in the {tree.leaves} leaves ({made} items); its directory and "
            f"file rates are of the count it printed: scaled by {tree.leaves}/{tree.dirs} to the items made")


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
