"""Translate an IOR 4.0 command line into pario parameters (pure Python).

`translate(argv)` accepts what a user pastes: an optional launcher prefix
(`mpiexec -n N`, `mpirun -np N`, with -ppn/-npernode), the IOR program
name, then IOR's options in every form IOR's parser takes (clustered flags,
glued values, `-O key=value,...` directives, `--posix.*`/`--mpiio.*` long
options, `-f` script files with `IOR START` / `RUN` / `IOR STOP`). Every
option becomes one of IOR's parameters (its `-O` / script names), so a
short option, a directive and a script line are one thing; each test (one
per script RUN) is then mapped to pario parameters. What pario does not
implement is refused, every such option of the line at once with its
reason; what has no effect here is accepted with a note; what IOR itself
rejects is rejected with IOR's reason. IOR's option tables live in
clusterbench.tools.ior_options. Mapping table and differences:
docs/kernels/pario.md.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from clusterbench.errors import BadInput
from clusterbench.tools.ior_options import (BACKEND_OPTION_PREFIXES, BACKENDS, DEFAULTS, DIRECTIVES, FLAG_SETTINGS, GRAMMAR,
                                      NOTES, NUMBER_SHORT, REFUSED, SHORT)
from clusterbench.tools.option_tokens import number, tokens

LAUNCHERS = {"mpiexec", "mpirun", "mpiexec.hydra", "srun"}
LAUNCHER_RANKS = {"-n", "-np", "--np", "--n"}
LAUNCHER_PPN = {"-ppn", "--ppn", "-npernode", "--npernode", "-perhost"}
# srun's: -n4, -n 4, --ntasks=4, --ntasks 4; -N/--nodes gives the ranks per node with the ranks
SRUN_RANKS = {"-n", "--ntasks"}
SRUN_NODES = {"-N", "--nodes"}
SRUN_PPN = {"--ntasks-per-node"}

APIS = {"POSIX": "posix", "MPIIO": "mpiio"}


@dataclass
class IorTest:
    """One IOR test: the command line, or one RUN of a script."""
    id: int
    settings: dict[str, str]          # IOR parameter names (lower case) -> value as given
    params: dict[str, str]            # pario parameters
    repetitions: int = 1

    @property
    def block(self) -> int:
        return bytes_of(self.params["block-size"]) or 0

    @property
    def transfer(self) -> int:
        return bytes_of(self.params["transfer-size"]) or 0

    @property
    def segments(self) -> int:
        return int(self.params["segments"])

    def flag(self, name: str) -> int:
        return int_of(self.settings.get(name, "0"))

    @property
    def write(self) -> bool:
        return bool(self.flag("writefile"))

    @property
    def read(self) -> bool:
        return bool(self.flag("readfile"))


@dataclass
class Translation:
    params: dict[str, str]                       # the first test's pario parameters
    ranks: int | None = None
    ranks_per_node: int | None = None
    notes: list[str] = field(default_factory=list)
    tests: list[IorTest] = field(default_factory=list)
    output: str = "default"                      # summaryFormat: default, json or csv
    verbose: int = 0
    summary_file: str | None = None
    argv: list[str] = field(default_factory=list)  # the IOR program and its options, as given
    launcher: str | None = None                  # "srun" for a line that starts with srun


def int_of(text: str) -> int:
    """atoi() as IOR uses it: leading digits, else 0."""
    m = re.match(r"\s*([+-]?\d+)", text or "")
    return int(m.group(1)) if m else 0


def bytes_of(text: str) -> int | None:
    """IOR's string_to_bytes: a count with an optional k/m/g/t/p multiple
    (binary; "1gb", "4MiB" as IOR reads them), None for a value that is
    negative or does not read as written (option_tokens.number)."""
    n = number(text).value
    return n if n is not None and n >= 0 else None


def size_read(flag: str, text: str, tool: str, problems: list[str], notes: list[str], expected: str,
              unit: str = "bytes") -> int | None:
    """The bytes or count of `flag text` as IOR reads it, else None and the
    problem; a value not written as IOR's help writes sizes (1gb, 4MiB,
    "1 g") gets a note of what was read, as the binary multiple a "GB" user
    may not expect."""
    read = number(text, tool)
    if read.value is None or read.value < 0:
        problems.append(f"{flag} {text}: " + (read.problem if read.value is None and read.problem != "not a number"
                                              else expected))
        return None
    if not read.plain:
        bits = next((b for b in (50, 40, 30, 20, 10) if read.value and read.value % (1 << b) == 0), 0)
        binary = f" ({read.value >> bits} {'KMGTP'[bits // 10 - 1]}iB)" if bits and unit == "bytes" else ""
        what = " ".join(w for w in (str(read.value), unit) if w) + binary
        notes.append(f"{flag} {text.strip()} read as {what}: {tool} takes the letter after the number as a binary "
                     f"multiple and reads nothing after it")
    return read.value


def _launcher(argv: list[str]) -> tuple[int | None, int | None, str | None, list[str]]:
    """(ranks, ranks per node, launcher, the rest) of a line that starts
    with `mpiexec -n N [-ppn M]` or `srun -n N [-N nodes | --ntasks-per-node M]`:
    srun's line runs through the srun launcher (it was four "unexpected
    word" problems: 'srun', -n, '4', 'ior'); mpiexec's through the default."""
    if not argv or os.path.basename(argv[0]) not in LAUNCHERS:
        return None, None, None, argv
    srun = os.path.basename(argv[0]) == "srun"
    ranks_opts, ppn_opts, nodes_opts = ((SRUN_RANKS, SRUN_PPN, SRUN_NODES) if srun
                                        else (LAUNCHER_RANKS, LAUNCHER_PPN, set()))
    counts: dict[str, int] = {}
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        word = argv[i]
        glued = re.fullmatch(r"(-[nN])(\d+)", word) if srun else None
        if glued:
            opt, eq, value = glued[1], "=", glued[2]
        else:
            opt, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        if opt not in ranks_opts | ppn_opts | nodes_opts:
            how = "-n N (and -N nodes or --ntasks-per-node M)" if srun else "-n N (and -ppn N)"
            raise BadInput(f"launcher option {word} is not understood here: give the ranks with {how}")
        if not eq:
            i += 1
            value = argv[i] if i < len(argv) else ""
        if not value.isdigit() or int(value) < 1:
            raise BadInput(f"launcher option {opt} needs a positive count")
        counts["ranks" if opt in ranks_opts else "ppn" if opt in ppn_opts else "nodes"] = int(value)
        i += 1
    ranks, ppn, nodes = counts.get("ranks"), counts.get("ppn"), counts.get("nodes")
    if nodes is not None:
        if ranks is None or ranks % nodes or (ppn is not None and ppn * nodes != ranks):
            raise BadInput(f"srun -N {nodes}: give -n, a multiple of the nodes, so every node runs as many ranks")
        ppn = ranks // nodes
    return ranks, ppn, "srun" if srun else None, argv[i:]


def directives(text: str, where: str, problems: list[str]) -> list[tuple[str, str]]:
    """IOR's ParseLine: comma-separated key=value, '#' starts a comment."""
    out = []
    for part in text.split("#", 1)[0].split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            problems.append(f"{where} '{part.strip()}': expected key=value")
            continue
        name = key.lower().lstrip("-")
        if name == "useo_direct":
            name = "posix.odirect"
        if name == "reordertasksconstant":
            name = "reordertasks"
        if name not in DIRECTIVES and not any(name.startswith(p) for p in BACKEND_OPTION_PREFIXES):
            problems.append(f"{where} {key}: unknown IOR parameter")
            continue
        if len(value.split()) > 1:
            # DecodeDirective's sscanf "%[^# \t\r\n]": the value ends at the first blank, so IOR ran
            # "blockSize = 64 k" with a block of 64 bytes (as written it read 64 KiB here)
            problems.append(f"{where} {key}={value}: IOR reads the value up to the first blank ('{value.split()[0]}') "
                            f"and ignores the rest; write it without blanks")
            continue
        out.append((name, value))
    return out


# An IOR script or hints file is a few KiB: /dev/zero given as one was read until the OOM killer came
SMALL_FILE_BYTES = 1 << 20


def small_file_lines(path: str) -> list[str]:
    """Its lines; OSError for a file that is not a regular one of at most SMALL_FILE_BYTES."""
    from clusterbench.files.small_file import read_small

    return read_small(path, SMALL_FILE_BYTES, "IOR script or hints file").decode("utf-8", errors="replace").splitlines()


def read_script(path: str, base: dict[str, str], problems: list[str]) -> list[dict[str, str]]:
    """IOR's ReadConfigScript: the lines between IOR START and IOR STOP; each
    RUN ends a test, the next directive starts one from the previous
    test's parameters; consecutive RUNs repeat a test."""
    try:
        lines = small_file_lines(path)
    except OSError as e:
        problems.append(f"-f {path}: cannot read the script: {e.strerror}")
        return [dict(base)]
    words = [line.strip() for line in lines]
    try:
        start = next(i for i, w in enumerate(words) if w.lower() == "ior start")
    except StopIteration:
        problems.append(f"-f {path}: no 'IOR START' line")
        return [dict(base)]
    tests = [dict(base)]
    ran = False
    for line_no, w in enumerate(words[start + 1:], start + 2):
        if not w or w.startswith("#"):
            continue
        if w.lower() == "ior stop":
            break
        if w.lower() == "run":
            if ran:
                tests.append(dict(tests[-1]))
            ran = True
            continue
        if ran:
            tests.append(dict(tests[-1]))
            ran = False
        for name, value in directives(w, f"{os.path.basename(path)}:{line_no}", problems):
            tests[-1][name] = value
    return tests


def mpi_hints(hints_file: str | None, problems: list[str]) -> dict[str, str]:
    """IOR's SetHints: IOR_HINT__MPI__<key>=<value> from the environment, then
    from the hints file's lines; GPFS hints (IOR_HINT__GPFS__) are refused."""
    lines = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("IOR_HINT")]
    if hints_file:
        try:
            lines += [line.strip() for line in small_file_lines(hints_file) if line.startswith("IOR_HINT")]
        except OSError as e:
            problems.append(f"--mpiio.hintsFileName {hints_file}: cannot read it: {e.strerror}")
    hints: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition("=")
        layer, _, key = name[len("IOR_HINT__"):].partition("__")
        if layer != "MPI" or not key:
            problems.append(f"{name}: only IOR_HINT__MPI__<key> hints are implemented")
        elif "," in value or "," in key:
            problems.append(f"{name}: a hint with a comma is not implemented")
        else:
            hints[key] = value.strip()
    return hints


def _settings_of_line(rest: list[str], problems: list[str]) -> tuple[dict[str, str], str | None]:
    parsed = tokens(rest, GRAMMAR)
    problems.extend(f"{p}" for p in parsed.problems)
    settings: dict[str, str] = {}
    script = None
    for opt, value in parsed.options:
        if opt == "-f":
            script = value
        elif opt == "-O":
            for name, val in directives(value, "-O", problems):
                settings[name] = val
        elif opt.startswith("--"):
            name = opt[2:].lower()
            settings[name] = value if value is not None else str(int_of(settings.get(name, "0")) + 1)
        else:
            name = SHORT[opt[1]]
            if opt[1] in NUMBER_SHORT:   # string_to_bytes, as -b: -i 1k is 1024 to IOR
                read = number(value)
                if read.value is None:
                    problems.append(f"{opt} {value}: " + (read.problem if read.problem != "not a number"
                                                          else "expected a whole number"))
                    continue
                value = str(read.value)
            if name in FLAG_SETTINGS:
                settings[name] = str(int_of(value)) if value is not None else str(int_of(settings.get(name, "0")) + 1)
            else:
                settings[name] = value
    return settings, script


def _count(s: dict[str, str], name: str, label: str, problems: list[str], minimum: int = 0,
           notes: list[str] | None = None) -> int:
    value = s.get(name, DEFAULTS.get(name, "0"))
    expected = f"expected a count of at least {minimum}"
    if name == "segmentcount":   # string_to_bytes in every form: -s 1k, segmentCount=1k are 1024
        n = size_read(label, value, "IOR", problems, notes if notes is not None else [], expected, "segments")
        if n is None:
            return minimum
    else:
        n = int(value) if re.fullmatch(r"\s*-?\d+\s*", value) else None
    if n is None or n < minimum:
        problems.append(f"{label} {value}: {expected}")
        return minimum
    return n


def _special(path: str) -> str | None:
    """'device', 'FIFO' or 'socket' for what is at path, None for a file, a
    directory or nothing."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return ("device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "FIFO" if stat.S_ISFIFO(mode)
            else "socket" if stat.S_ISSOCK(mode) else None)


def test_params(s: dict[str, str], ranks: int | None, notes: list[str], problems: list[str]) -> tuple[dict, int]:
    """One test's IOR parameters -> pario parameters and repetitions."""
    def on(name: str) -> bool:
        return int_of(s.get(name, "0")) > 0

    params: dict[str, str] = {"strategy": "independent", "read": "same"}
    api = s.get("api", "POSIX")
    if api.upper() not in APIS:
        if api.upper() in BACKENDS:
            problems.append(f"-a {api}: IOR's {api.upper()} backend ({BACKENDS[api.upper()]}) is not offered; "
                            f"pario offers the APIs {', '.join(APIS)}")
        else:
            problems.append(f"-a {api}: not an IOR backend (IOR 4.0 has {', '.join(BACKENDS)}); "
                            f"pario offers the APIs {', '.join(APIS)}")
        api = "POSIX"
    params["api"] = APIS[api.upper()]
    sizes: dict[str, int | None] = {}
    for name, label, key in (("blocksize", "-b", "block-size"), ("transfersize", "-t", "transfer-size")):
        value = s.get(name, DEFAULTS[name])
        n = sizes[key] = size_read(label, value, "IOR", problems, notes, "expected a size like 4g, 4m, 512k or 4096")
        # as the user wrote it when cbk reads it the same way (4g, 1m), else bytes
        params[key] = value.strip().lower() if re.fullmatch(r"\d+[kmgt]?", value.strip().lower()) else str(n)
    block, transfer = sizes["block-size"], sizes["transfer-size"]
    params["segments"] = str(_count(s, "segmentcount", "-s", problems, 1, notes))
    if int(params["segments"]) > 100000000:
        problems.append(f"-s {params['segments']}: more segments than pario takes (10^8)")
    repetitions = _count(s, "repetitions", "-i", problems, 1)
    # IOR's own checks (ior.c ValidateTests), so a line IOR rejects fails here too; one reason for the pair
    # of sizes, the first IOR stops at, and none against a size that did not read (a stand-in of 8 bytes
    # gave "-b 8 -t 65536: block size must be a multiple of transfer size" for -b 1mb, a size nobody wrote)
    sizes_read = block is not None and transfer is not None
    pair = " ".join(f"{flag} {s[name]}" if name in s else f"{flag} {DEFAULTS[name]} (IOR's default)"
                    for flag, name in (("-b", "blocksize"), ("-t", "transfersize")))
    if sizes_read and transfer == 0:
        problems.append("-t 0: test will not complete with zero transfer size (IOR)")
    elif sizes_read and block % transfer:
        problems.append(f"{pair}: block size must be a multiple of transfer size (IOR)")
    elif sizes_read and block < transfer:
        problems.append(f"{pair}: block size must not be smaller than transfer size (IOR)")
    elif sizes_read and (block % 8 or transfer % 8):
        problems.append("block and transfer size must be multiples of 8 bytes (IOR's access size)")
    if not any(on(n) for n in ("writefile", "readfile", "checkwrite", "checkread")):
        s["writefile"] = s["readfile"] = "1"
    write, read, check_write, check_read = (on(n) for n in ("writefile", "readfile", "checkwrite", "checkread"))
    if check_read and not write and not on("settimestampsignature"):
        problems.append("-R without -w: using readCheck only requires to write a timeStampSignature -- use -G (IOR)")
    if check_write and not write:
        # IOR's TestIoSys removes the file, then checks it after a write phase this line does not have
        problems.append("-W without -w: IOR checks the file it has just written, and this line writes none "
                        "(IOR fails: Cannot open file); add -w")
    if on("reordertasks") and on("reordertasksrandom"):
        problems.append("-C and -Z: Both Constant and Random task re-ordering specified. Choose one and resubmit (IOR)")
    shared = not on("fileperproc")
    if on("randomoffset") and shared and (on("reordertasksrandom") or on("reordertasks")):
        problems.append("-z with -C or -Z on a single shared file: random offset and reorder tasks specified with "
                        "single-shared-file. Choose one and resubmit (IOR)")
    if on("randomoffset") and check_read and "random-offset-seed" not in s:
        problems.append("-z with -R: random offset with read check option requires to set the random seed "
                        "(--random-offset-seed, IOR)")
    # IOR after 4.0 reads a flag given twice as another mode (its option table: "specify twice"); 4.0 read
    # it as once. Taken as once, -z -z (io500's rnd4k read) ran shuffled offsets where IOR draws them at random
    if int_of(s.get("randomoffset", "0")) > 1:
        problems.append("-z twice (randomOffset above 1): IOR 4.1 draws the offsets at random, repeats and overlaps included, which is not "
                        "implemented; -z once for a shuffled order of the block's offsets (IOR 4.0 read -z -z as -z)")
    if int_of(s.get("reordertasksrandom", "0")) > 1:
        problems.append("-Z twice (reorderTasksRandom above 1): IOR 4.1 shuffles the ranks (every file read by exactly one rank), which is not "
                        "implemented; -Z once for IOR's random draw of each reader's file (IOR 4.0 read -Z -Z as -Z)")
    if int_of(s.get("randomoffset", "0")) == 1 and sizes_read and block == transfer:   # IOR 4.1: -z once only
        problems.append("-z with -b equal to -t: IOR randomizes access within a block, choose blocksize > transferSize")
    if on("dualmount") and shared:
        problems.append("-y: Dual Mount can only be used with File Per Process (IOR)")
    if on("stonewallingwearout") and not on("deadlineforstonewalling"):
        problems.append("stoneWallingWearOut=1: the stoneWallingWearOut is only sensible when setting a stonewall "
                        "deadline with -D (IOR)")
    if on("fileperproc"):
        params["strategy"] = "split"
        if on("collective"):
            notes.append("-c with -F: each rank's own file, collective calls on it change nothing (independent I/O)")
    elif on("collective"):
        if params["api"] == "mpiio":
            params["strategy"] = "collective"
        else:
            notes.append("-c with POSIX: POSIX has no collective I/O; independent I/O, as IOR does")
    if on("reordertasks"):
        params["read"] = "shifted"
    if on("reordertasksrandom"):
        params["read"] = "random"
        params["seed"] = str(int_of(s.get("reordertasksrandomseed", "0")))
    if on("reordertasks") or on("reordertasksrandom"):
        params["shift-nodes"] = str(max(1, _count(s, "taskpernodeoffset", "-Q", problems, 0)))
    if on("randomoffset"):
        params["offsets"] = "random"
    if on("fsyncperwrite"):
        params["fsync"] = "each"
    elif on("fsync"):
        params["fsync"] = "end"
    if check_read or check_write:
        params["verify"] = "true"
    if on("multifile"):
        params["multi-file"] = "true"
    if on("intratestbarriers"):
        params["phase-barriers"] = "true"
    if on("posix.odirect"):
        if params["api"] != "posix":
            problems.append("--posix.odirect needs -a POSIX")
        params["direct"] = "true"
    deadline = int_of(s.get("deadlineforstonewalling", "0"))
    if deadline < 0:
        problems.append(f"-D {deadline}: expected seconds")
    elif deadline:
        params["deadline"] = str(deadline)
        if on("stonewallingwearout"):
            params["wear-out"] = "true"
    hints = mpi_hints(s.get("mpiio.hintsfilename"), problems)
    if hints:
        if params["api"] != "mpiio":
            notes.append("MPI-IO hints ignored: the API is POSIX")
        else:
            params["hints"] = ",".join(f"{k}={v}" for k, v in hints.items())
    if on("mpiio.showhints") and params["api"] != "mpiio":
        notes.append("--mpiio.showHints ignored: the API is POSIX")
    delay = s.get("intertestdelay", "0")
    if int_of(delay) < 0:
        problems.append(f"-d {delay}: expected a delay in seconds")
    elif int_of(delay):
        params["delay"] = str(int_of(delay))
    timed_write, timed_read = write, read or check_read
    if timed_write and not timed_read and not check_write:
        params["phases"] = "write-only"
    elif timed_read and not timed_write:
        params["phases"] = "read-only"
        notes.append("-r without -w: pario writes the data first (untimed, unreported), then times the read")
    elif check_write and not timed_read:
        notes.append("-W: pario checks the data on a timed read after the write; IOR's output shows the write only")
    testfile = s.get("testfile", "testFile")
    names = [n for n in testfile.split("@") if n]   # IOR's ParseFileName: strtok at '@'
    if len(names) > 1 and on("fileperproc"):
        problems.append(f"-o {testfile}: several test file names (IOR puts rank r's file under name r mod "
                        f"{len(names)}, over several file systems) are not implemented")
    testfile = names[0] if names else testfile   # a shared file is the first name, as IOR's
    # IOR's files are the name itself (shared) or <name>.<rank> (-F): they live in the
    # directory part of the name as written, so `-o /scratch/run1/ -F` writes in run1
    params["dir"] = os.path.dirname(testfile) or "."
    if testfile.endswith("/") and not on("fileperproc"):
        problems.append(f"-o {testfile}: names a directory, and IOR opens the shared test file by that name "
                        f"(it fails); give a file name in it (-o {testfile}testFile)")
    elif not on("fileperproc") and _special(testfile):
        # IOR writes into /dev/null or a FIFO itself; pario would measure files in its directory (/dev: memory)
        problems.append(f"-o {testfile}: names a {_special(testfile)}, which IOR writes into and pario cannot "
                        f"(it writes files in a directory); give a file name on the file system to measure")
    tasks = s.get("numtasks")
    if tasks is not None and ranks is not None and int_of(tasks) not in (ranks, -1, 0):
        problems.append(f"-N {tasks}: give the rank count to the launcher (mpiexec -n {tasks}); it says {ranks}")
    for name in s:
        backend = name.split(".", 1)[0].upper() if "." in name else None
        if backend in BACKENDS and backend not in APIS:
            if backend != api.upper():   # a selected one is refused above, with -a
                notes.append(f"--{name} ignored: an option of IOR's {backend} backend, which this line does not use")
        elif name == "uniquedir" and not (on(name) and on("fileperproc")):
            if on(name):   # IOR reads -u with -F only
                notes.append(f"-u ignored:{NOTES[name].split(':', 1)[1]}")
        elif name in REFUSED:
            problems.append(REFUSED[name])
        elif NOTES.get(name):
            notes.append(f"{NOTES[name].split(':', 1)[0]} ignored:{NOTES[name].split(':', 1)[1]}")
    return params, repetitions


def translate(argv: list[str]) -> Translation:
    ranks, ppn, launcher, rest = _launcher(list(argv))
    program = "ior"
    if rest and os.path.basename(rest[0]).lower() in ("ior", "ior.exe"):
        program, rest = rest[0], rest[1:]
    problems: list[str] = []
    base, script = _settings_of_line(rest, problems)
    settings_list = read_script(script, base, problems) if script else [base]
    if ranks is None and "numtasks" in base and int_of(base["numtasks"]) > 0:
        ranks = int_of(base["numtasks"])
    notes: list[str] = []
    tests = []
    for i, s in enumerate(settings_list):
        params, reps = test_params(s, ranks, notes, problems)
        tests.append(IorTest(i, s, params, reps))
    if problems:
        raise BadInput("IOR line refused: " + "; ".join(dict.fromkeys(problems)))
    last = settings_list[-1]
    output = last.get("summaryformat", "default").lower()
    if output not in ("default", "json", "csv"):
        raise BadInput(f"summaryFormat={last['summaryformat']}: Unknown summaryFormat (default, JSON or CSV)")
    first = tests[0]
    if first.params["read"] == "same" and len(tests) == 1 and first.read:
        notes.append("no -C: each rank reads its own data back, as IOR does; pario empties the page cache first")
    params = dict(first.params)
    if first.repetitions != 1:
        params["repetitions"] = str(first.repetitions)
    return Translation(params, ranks, ppn, list(dict.fromkeys(notes)), tests, output,
                       max(int_of(s.get("verbose", "0")) for s in settings_list), last.get("summaryfile"),
                       [program, *rest], launcher)
