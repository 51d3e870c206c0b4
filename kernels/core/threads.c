#include "threads.h"

#include <errno.h>
#include <stdlib.h>

int cbk_threads_start(struct cbk_threads *t, int n, void *(*main)(void *), void *args, size_t arg_bytes)
{
    t->started = 0;
    t->ids = calloc(n > 0 ? (size_t)n : 1, sizeof *t->ids);
    if (!t->ids)
        return ENOMEM;
    for (int i = 0; i < n; i++) {
        int rc = pthread_create(&t->ids[i], NULL, main, (char *)args + (size_t)i * arg_bytes);
        if (rc)
            return rc;
        t->started++;
    }
    return 0;
}

void cbk_threads_join(struct cbk_threads *t)
{
    for (int i = 0; i < t->started; i++)
        pthread_join(t->ids[i], NULL);
    t->started = 0;
    free(t->ids);
    t->ids = NULL;
}
