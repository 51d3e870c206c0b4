"""IOR 4.0's options as data: which short letters, long options and `-O`
directive names IOR knows (src/parse_options.c createGlobalOptions,
DecodeDirective; the POSIX and MPIIO modules' options), and what pario does
with the ones it does not map: accept with a note, or refuse with a reason.
clusterbench.tools.ior_args reads these tables; nothing else repeats them.
"""
from __future__ import annotations

from clusterbench.tools.option_tokens import Grammar

# IOR 4.0's short options (src/parse_options.c, createGlobalOptions) -> its parameter names
SHORT = {"a": "api", "A": "refnum", "b": "blocksize", "c": "collective", "C": "reordertasks",
         "d": "intertestdelay", "D": "deadlineforstonewalling", "e": "fsync", "E": "useexistingtestfile",
         "F": "fileperproc", "g": "intratestbarriers", "G": "settimestampsignature", "i": "repetitions",
         "j": "outlierthreshold", "k": "keepfile", "K": "keepfilewitherror", "l": "datapackettype",
         "m": "multifile", "M": "memorypernode", "N": "numtasks", "o": "testfile", "Q": "taskpernodeoffset",
         "r": "readfile", "R": "checkread", "s": "segmentcount", "t": "transfersize", "T": "maxtimeduration",
         "u": "uniquedir", "v": "verbose", "w": "writefile", "W": "checkwrite", "x": "singlexferattempt",
         "X": "reordertasksrandomseed", "y": "dualmount", "Y": "fsyncperwrite", "z": "randomoffset",
         "Z": "reordertasksrandom"}
SHORT_VALUES = set("aAbdDfGijlMNoOQstTX")
# the value options IOR reads with string_to_bytes as numbers ('d' in its table; -b, -t, -s are sizes)
NUMBER_SHORT = set("AdDGijNQTX")
# long options of IOR and of its POSIX and MPIIO modules
LONG_FLAGS = {"collective", "warningAsErrors", "dryRun", "posix.odirect", "posix.rangelocks",
              "posix.gpfs.hintaccess", "posix.gpfs.finegrainwritesharing", "posix.gpfs.finegrainreadsharing",
              "posix.gpfs.createsharing", "posix.lustre.ignorelocks", "gpuDirect", "mpiio.showHints",
              "mpiio.preallocate", "mpiio.useStridedDatatype", "mpiio.useFileView"}
LONG_VALUES = {"dataPacketType", "randomPrefill", "random-offset-seed", "posix.beegfs.NumTargets",
               "posix.beegfs.ChunkSize", "posix.gpfs.releasetoken", "posix.lustre.stripecount",
               "posix.lustre.stripesize", "posix.lustre.startost", "posix.lustre.pool", "mpiio.hintsFileName"}
GRAMMAR = Grammar(frozenset(SHORT_VALUES), frozenset(set(SHORT) - SHORT_VALUES - {"f", "O"}),
                  frozenset(LONG_VALUES), frozenset(LONG_FLAGS))  # backend prefixes: set below, with BACKENDS
# IOR's -O / script names, case-insensitive, as IOR's DecodeDirective knows them
DIRECTIVES = set(SHORT.values()) | {
    "summaryfile", "summaryformat", "saverankperformancedetailscsv", "debug", "platform", "allocatebufferongpu",
    "gpuid", "gpudirect", "stonewallingwearout", "stonewallingwearoutiterations", "stonewallingstatusfile",
    "mintimeduration", "numnodes", "numtasksonnode0", "reordertasksconstant", "warningaserrors", "useo_direct",
    "randomprefill", "random-offset-seed", "dryrun", "summaryalways", "interiodelay", "memorypertask",
    "saveperopdatacsv"} | {n.lower() for n in LONG_FLAGS | LONG_VALUES}   # saveperopdatacsv: IOR 4.1's
FLAG_SETTINGS = {SHORT[c] for c in GRAMMAR.short_flags}

# Accepted; nothing changes here (the note says why).
NOTES = {
    "keepfile": "-k: pario always removes its files (they live in its private directory)",
    "keepfilewitherror": "-K: pario removes its files, also after a verify error",
    "settimestampsignature": "-G: pario's data carries offset and writer rank in every 4 KiB, not a time stamp",
    "datapackettype": "-l: pario writes its own incompressible pattern",
    "outlierthreshold": "-j: no outlier warnings; every record keeps the slowest rank and the per-rank spread",
    "uniquedir": "-u: without -F, IOR's one shared file takes no directory per rank either",
    "singlexferattempt": "-x: pario completes short transfers (a failed one is an error)",
    "random-offset-seed": "--random-offset-seed: pario draws the random offsets from the run id",
    "warningaserrors": "--warningAsErrors: every failure is already an error",
    "refnum": "", "verbose": "", "summaryformat": "", "summaryfile": "", "platform": "",
}
# Refused: pario does not do it, and it would change what is measured.
REFUSED = {
    "useexistingtestfile": "-E: pario always writes fresh files in a private directory it removes",
    "stonewallingwearoutiterations": "stoneWallingWearOutIterations: a fixed transfer count per rank is not "
                                     "implemented",
    "stonewallingstatusfile": "stoneWallingStatusFile: splitting write and read into two runs is not possible "
                              "(pario removes its files)",
    "maxtimeduration": "-T: a time limit per test is not implemented",
    # IOR -u -F opens /dir/<rank>/file.<rank>: each rank creates its file in its own directory, not all N
    # in one, whose create contention (one directory's lock or token on Lustre, GPFS) is in the open time
    "uniquedir": "-u with -F: a directory per rank (IOR writes /dir/<rank>/file.<rank>) is not implemented; "
                 "pario's ranks would create their files in one directory, a different open time",
    "mintimeduration": "minTimeDuration: a minimum run time is not implemented",
    "memorypernode": "-M: the memory hog is not implemented (it would shrink the page cache the figures see)",
    "memorypertask": "memoryPerTask: the memory hog is not implemented (it would shrink the page cache the figures "
                     "see)",
    "interiodelay": "interIODelay: a wait between transfers (inside IOR's timed phase) is not implemented",
    "dualmount": "-y: dual mount points are not implemented",
    "randomprefill": "--randomPrefill is not implemented",
    "dryrun": "--dryRun: pario always does the I/O",
    "saverankperformancedetailscsv": "saveRankPerformanceDetailsCSV: per-rank CSV files are not written",
    "saveperopdatacsv": "savePerOpDataCSV: per-operation CSV files are not written",
    "allocatebufferongpu": "GPU buffers are not implemented", "gpuid": "GPU buffers are not implemented",
    "gpudirect": "GPU buffers are not implemented",
    "numnodes": "numNodes: the launcher places the ranks",
    "numtasksonnode0": "numTasksOnNode0: the launcher places the ranks",
    "debug": "debug mode is not implemented", "summaryalways": "summaryAlways is not implemented",
    "posix.rangelocks": "--posix.rangelocks: range locks are not implemented",
    "mpiio.preallocate": "--mpiio.preallocate: preallocation is not implemented",
    "mpiio.usestrideddatatype": "--mpiio.useStridedDatatype: derived datatypes are not implemented",
    "mpiio.usefileview": "--mpiio.useFileView: file views are not implemented",
}
for _name in ("posix.beegfs.numtargets", "posix.beegfs.chunksize", "posix.gpfs.hintaccess", "posix.gpfs.releasetoken",
              "posix.gpfs.finegrainwritesharing", "posix.gpfs.finegrainreadsharing", "posix.gpfs.createsharing",
              "posix.lustre.stripecount", "posix.lustre.stripesize", "posix.lustre.startost",
              "posix.lustre.ignorelocks", "posix.lustre.pool"):
    REFUSED[_name] = f"--{_name}: file-system specific hints are not implemented"

# IOR 4.0's backends (src/aiori.c available_aiori; -a names them, case-insensitive) -> what each is.
# Each registers its options as --<name>.<option> whichever backend a line selects.
BACKENDS = {"POSIX": "POSIX I/O", "MPIIO": "MPI-IO", "DUMMY": "no I/O: it only waits, to test IOR itself",
            "AIO": "Linux libaio", "MMAP": "memory-mapped files", "HDF5": "HDF5 library", "HDFS": "Hadoop HDFS",
            "NCMPI": "parallel netCDF", "PMDK": "persistent memory", "IME": "DDN IME", "DFS": "DAOS file system",
            "DAOS": "DAOS array", "RADOS": "Ceph RADOS objects", "CEPHFS": "CephFS library",
            "S3-4C": "S3 via aws4c", "S3-LIBS3": "S3 via libs3", "GFARM": "Gfarm", "CHFS": "CHFS",
            "FINCHFS": "FINCHFS", "LIBNFS": "NFS via libnfs"}
# the option prefixes of the backends clusterbench's grammar does not list one by one
BACKEND_OPTION_PREFIXES = frozenset(f"{name.lower()}." for name in BACKENDS) - {"posix.", "mpiio."}

# IOR's defaults (ior.c init_IOR_Param_t) where the translation needs them
DEFAULTS = {"api": "POSIX", "blocksize": "1m", "transfersize": "256k", "segmentcount": "1",
            "repetitions": "1", "taskpernodeoffset": "1", "testfile": "testFile", "refnum": "0",
            "reordertasksrandomseed": "0", "verbose": "0"}
GRAMMAR = Grammar(GRAMMAR.short_values, GRAMMAR.short_flags, GRAMMAR.long_values, GRAMMAR.long_flags,
                  BACKEND_OPTION_PREFIXES)
