/* Test hook: CBK_TEST_STOP_AT=<rank>:<point> stops that rank (SIGSTOP to
 * itself, as a node frozen) where it reaches point: "setup" (before the
 * set-up's exchange of host names: the driver's, before any kernel's),
 * "validation" (before the driver's agreement on validation), "placement"
 * (before the mpi kernel's exchange of placement), "barrier" (its first
 * patient barrier: the driver's before the first repetition), "closing"
 * (before the link matrix's closing exchanges). These
 * are places no signal from outside can hit on time; the tests of the
 * notes a stopped rank leaves its peers to say stop a rank there
 * (tests/test_mpi_kernels.py). Never called in a timed loop. */
#ifndef CBK_TEST_STOP_H
#define CBK_TEST_STOP_H

void cbk_test_stop_at(int rank, const char *point);

#endif
