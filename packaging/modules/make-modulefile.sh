#!/usr/bin/env bash
# Writes clusterbench's Lmod module file for an install made as docs/install.md
# describes, and the bin directory it puts on PATH.
#   make-modulefile.sh PREFIX VENV MPI_MODULE MODULEFILE
#   PREFIX      where bin/ (links to clusterbench and cbk) is made
#   VENV        the virtual environment clusterbench was pip-installed into
#   MPI_MODULE  the module cbk was built against, e.g. openmpi/4.1.5 ("" for none)
#   MODULEFILE  e.g. /opt/modulefiles/clusterbench/0.1.0.lua
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 PREFIX VENV MPI_MODULE MODULEFILE" >&2
  exit 2
fi
prefix=$1 venv=$2 mpi=$3 modulefile=$4
for exe in clusterbench cbk; do
  [ -x "$venv/bin/$exe" ] || { echo "make-modulefile: $venv/bin/$exe not found: install clusterbench into $venv first" >&2; exit 2; }
done
version=$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("clusterbench"))')
mkdir -p "$prefix/bin" "$(dirname "$modulefile")"
ln -sfn "$venv/bin/clusterbench" "$prefix/bin/clusterbench"
ln -sfn "$venv/bin/cbk" "$prefix/bin/cbk"
sed -e "s|@VERSION@|$version|g" -e "s|@PREFIX@|$prefix|g" -e "s|@MPI_MODULE@|$mpi|g" \
    -e "s|@MPI_MODULE_TEXT@|${mpi:-no MPI module}|g" \
    "$(dirname "$0")/clusterbench.lua" > "$modulefile"
echo "make-modulefile: wrote $modulefile"
