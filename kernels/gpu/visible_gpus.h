#ifndef CBK_VISIBLE_GPUS_H
#define CBK_VISIBLE_GPUS_H

/* `cbk --gpus`: how many GPUs this process sees, as the GPU runtime counts
 * them (after CUDA_VISIBLE_DEVICES and its kind). clusterbench gives each
 * rank of a GPU step its own GPU by default, and outside a batch job no
 * variable names the node's GPUs: the runtime is what knows them. Prints
 * the count on stdout; 0 with the runtime's reason on stderr when none is
 * usable. Returns the exit status. */
int cbk_print_visible_gpus(void);

#endif
