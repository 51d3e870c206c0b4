-- Lmod module file for clusterbench (docs/install.md, "Module file").
-- A template: packaging/modules/make-modulefile.sh fills in
--   @VERSION@     clusterbench's version
--   @PREFIX@      the install prefix; @PREFIX@/bin holds clusterbench and cbk only
--                 (links into the virtual environment, so python and pip stay hidden)
--   @MPI_MODULE@  the MPI module cbk was built against ("" when there is none)
help([[
clusterbench @VERSION@: performance evaluation of HPC clusters (disks, file
systems, networks, MPI, compute). cbk was built against @MPI_MODULE_TEXT@.
Start with: clusterbench run quick --dir=$SCRATCH
]])
whatis("Name: clusterbench")
whatis("Version: @VERSION@")
whatis("Description: cluster performance evaluation with stored, comparable results")

local prefix = "@PREFIX@"
local mpi = "@MPI_MODULE@"
-- cbk links against one MPI: load that one, so the library and the mpiexec
-- found at run time are the build's (clusterbench --version warns otherwise)
if mpi ~= "" then
    depends_on(mpi)
end
prepend_path("PATH", pathJoin(prefix, "bin"))
setenv("CLUSTERBENCH_CBK", pathJoin(prefix, "bin", "cbk"))
