#include "visible_gpus.h"

#include "../core/cbk.h"
#include "gpu_runtime.h"

#include <stdio.h>

int cbk_print_visible_gpus(void)
{
    const struct cbk_gpu_runtime *rt = cbk_gpu_runtime();
    char why[CBK_MESSAGE_MAX];
    int count = 0;
    if (rt->probe(why, sizeof why))
        fprintf(stderr, "%s\n", why);   /* none usable: the count is 0, and why */
    else
        count = rt->device_count();
    printf("%d\n", count);
    return fflush(stdout) ? CBK_EXIT_FAILED : CBK_EXIT_OK;
}
