/* The end of an MPI run: every rank past its last message, then
 * MPI_Finalize under a watchdog. */
#ifndef CBK_FINALIZE_H
#define CBK_FINALIZE_H

/* Default bound on MPI_Finalize, in seconds; CBK_FINALIZE_TIMEOUT_S
 * overrides it (0 turns the watchdog off, and so does inf or any value
 * above CBK_FINALIZE_TIMEOUT_S_MAX, a year: no bound). */
#define CBK_FINALIZE_TIMEOUT_S_DEFAULT 20.0
#define CBK_FINALIZE_TIMEOUT_S_MAX (365.0 * 86400.0)

/* Barrier, then MPI_Finalize. Should MPI_Finalize not return within the
 * bound, the rank says so on stderr (one line) and ends with `status`:
 * its records were written before the barrier. Without MPI it does
 * nothing. */
void cbk_finalize(int status);

#endif
