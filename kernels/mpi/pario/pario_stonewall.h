/* pario's stonewalling, as IOR's -D (a deadline on moving data) and
 * -O stoneWallingWearOut=1 (after it, every rank goes on to the most
 * transfers any rank reached): when to stop, where to go on to, and the
 * fields a stonewalled phase reports. The kernel (pario.c) owns the loop
 * that moves the data and asks these at each transfer. */
#ifndef PARIO_STONEWALL_H
#define PARIO_STONEWALL_H

#include "../../core/cbk.h"

#include <stdbool.h>
#include <stdint.h>

struct pario_deadline {
    double seconds;  /* after the first transfer; 0 = none, move every byte */
    bool wear_out;
    bool lockstep;   /* ranks move data in lockstep (collective calls, io-master) */
};

/* Where one phase hit the wall, as IOR's summary columns need it. */
struct pario_stonewall { uint64_t at_wall; double wall_s; };

/* After each transfer: true when this rank stops now. In lockstep rank 0's
 * decision is every rank's (collective: every rank calls it). */
bool pario_stonewall_hit(struct cbk_ctx *c, const struct pario_deadline *d, double start_s);

/* After the stonewall (collective): notes it in `sw` and returns the count
 * this rank goes on to: `done`, or with wear-out the largest reached. */
uint64_t pario_stonewall_target(struct cbk_ctx *c, const struct pario_deadline *d, uint64_t done, double start_s,
                                struct pario_stonewall *sw);

/* Collective: the stonewall fields of phase `p` (none without a deadline);
 * `ops` is the transfers per rank a phase moves when not stopped. */
void pario_stonewall_fields(struct cbk_ctx *c, const struct pario_deadline *d, struct cbk_phase *p, uint64_t done,
                            const struct pario_stonewall *sw, uint64_t transfer_bytes, uint64_t ops);

#endif
