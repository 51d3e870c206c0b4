#include "pario_stonewall.h"

/* As IOR's WriteOrRead: the clock starts at the first transfer; a rank
 * stops after the transfer that passes the deadline. Where ranks move data
 * in lockstep rank 0 decides for all, or a collective would hang. */
bool pario_stonewall_hit(struct cbk_ctx *c, const struct pario_deadline *d, double start_s)
{
    if (d->seconds <= 0)
        return false;
    int hit = cbk_now(c) - start_s > d->seconds;
    if (d->lockstep)
        MPI_Bcast(&hit, 1, MPI_INT, 0, c->comm);
    return hit;
}

uint64_t pario_stonewall_target(struct cbk_ctx *c, const struct pario_deadline *d, uint64_t done, double start_s,
                                struct pario_stonewall *sw)
{
    sw->at_wall = done;
    sw->wall_s = cbk_now(c) - start_s;
    if (!d->wear_out)
        return done;
    uint64_t most;
    MPI_Allreduce(&done, &most, 1, MPI_UINT64_T, MPI_MAX, c->comm);
    return most;
}

void pario_stonewall_fields(struct cbk_ctx *c, const struct pario_deadline *d, struct cbk_phase *p, uint64_t done,
                            const struct pario_stonewall *sw, uint64_t transfer_bytes, uint64_t ops)
{
    if (d->seconds <= 0)
        return;
    uint64_t lo, hi, sum, at_lo, at = sw->at_wall;
    MPI_Reduce(&done, &lo, 1, MPI_UINT64_T, MPI_MIN, 0, c->comm);
    MPI_Reduce(&done, &hi, 1, MPI_UINT64_T, MPI_MAX, 0, c->comm);
    MPI_Reduce(&at, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, c->comm);
    MPI_Reduce(&at, &at_lo, 1, MPI_UINT64_T, MPI_MIN, 0, c->comm);
    cbk_phase_field(p, CBK_REAL("stonewall_deadline_s", d->seconds));
    cbk_phase_field(p, CBK_BOOL("stonewall_wear_out", d->wear_out));
    cbk_phase_field(p, CBK_REAL("stonewall_s", sw->wall_s));
    cbk_phase_field(p, CBK_REAL("stonewall_bytes_mean", (double)sum * (double)transfer_bytes / c->size));
    /* IOR's "stonewalling pairs accessed min:" (the most is the wear-out's target, transfers_max) */
    cbk_phase_field(p, CBK_U64("stonewall_transfers_min", at_lo));
    cbk_phase_field(p, CBK_U64("transfers_min", lo));
    cbk_phase_field(p, CBK_U64("transfers_max", hi));
    if (lo < ops)
        cbk_phase_warn(p, "stonewalled: the deadline stopped the transfers before all the data was moved");
}
