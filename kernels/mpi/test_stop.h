/* Test hook: CBK_TEST_STOP_AT=<rank>:<point> stops that rank of the world
 * (SIGSTOP to itself, as a node frozen) where it reaches point: "setup"
 * (before the set-up's exchange of host names), "barrier" (its first
 * patient barrier), "closing" (the link matrix's closing exchanges). These
 * are places no signal from outside can hit on time; the tests of the
 * notes a stopped rank leaves its peers to say stop a rank there
 * (tests/test_mpi_kernels.py). Never called in a timed loop. */
#ifndef CBK_TEST_STOP_H
#define CBK_TEST_STOP_H

void cbk_test_stop_at(int rank, const char *point);

#endif
