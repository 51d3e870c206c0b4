/* mpi's placement: which ranks pair up and share a node, whether a node is
 * oversubscribed, and the MPI library's tuning variables in rank 0's
 * environment (recorded beside every figure). */
#include "mpi_kernel.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* The MPI library's run-time settings (collective algorithms, transports):
 * the prefixes of clusterbench.environment.software.MPI_ENV_PREFIXES, less
 * the per-job internals Open MPI's launcher sets (LAUNCHER_INTERNAL_PREFIXES). */
static bool is_tuning_variable(const char *entry)
{
    static const char *const prefixes[] = { "MPIR_CVAR_", "OMPI_MCA_", "I_MPI_", "UCX_", "FI_", "MV2_", "PSM2_", "HCOLL_" };
    static const char *const internal[] = { "OMPI_MCA_orte_", "OMPI_MCA_ess_", "OMPI_MCA_pmix", "OMPI_MCA_prte_",
                                            "OMPI_MCA_initial_wdir", "OMPI_MCA_ras_" };
    for (size_t i = 0; i < sizeof internal / sizeof *internal; i++)
        if (!strncmp(entry, internal[i], strlen(internal[i])))
            return false;
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(entry, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

void mpi_placement(struct cbk_ctx *c, struct mpi_state *s, enum mpi_pairing pairing)
{
    int p = s->size, r = s->rank, *node_of = calloc((size_t)p, sizeof *node_of);
    if (!node_of)
        cbk_fail(c, CBK_EXIT_FAILED, "mpi: out of memory");
    /* node id = lowest world rank sharing memory with this one */
    MPI_Comm node;
    int leader;
    MPI_Comm_split_type(s->comm, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node);
    MPI_Allreduce(&r, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, s->comm);
    MPI_Allreduce(&c->node_size, &s->ranks_per_node_min, 1, MPI_INT, MPI_MIN, s->comm);
    MPI_Allreduce(&c->node_size, &s->ranks_per_node_max, 1, MPI_INT, MPI_MAX, s->comm);
    int over = c->node_size > sysconf(_SC_NPROCESSORS_ONLN), any_over;
    MPI_Allreduce(&over, &any_over, 1, MPI_INT, MPI_MAX, s->comm);
    s->oversubscribed = any_over;

    s->active = true;
    if (pairing == MPI_PAIRING_HALF) {
        s->initiator = r < p / 2;
        s->partner = s->initiator ? r + p / 2 : r - p / 2;
        s->pairs = p / 2;
    } else if (pairing == MPI_PAIRING_NEIGHBOUR) {
        s->initiator = r % 2 == 0;
        s->partner = r ^ 1;
        s->pairs = p / 2;
    } else {
        s->active = r < 2;
        s->initiator = r == 0;
        s->partner = r == 0 ? 1 : 0;
        s->pairs = 1;
    }
    s->pairs_same_node = 0;
    for (int a = 0; a < p && p >= 2; a++) {
        int b = pairing == MPI_PAIRING_HALF ? a + p / 2 : pairing == MPI_PAIRING_NEIGHBOUR ? a + 1 : 1;
        bool first_of_pair = pairing == MPI_PAIRING_HALF ? a < p / 2 : pairing == MPI_PAIRING_NEIGHBOUR ? a % 2 == 0 : a == 0;
        if (first_of_pair && b < p && node_of[a] == node_of[b])
            s->pairs_same_node++;
    }
    free(node_of);
}

void mpi_tuning_variables(struct mpi_state *s)
{
    for (char **e = environ; *e && s->tunings < MAX_TUNING; e++)
        if (is_tuning_variable(*e))
            s->tuning[s->tunings++] = *e;
}
