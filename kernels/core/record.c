#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cbk_record_begin(struct cbk_json *j, FILE *f, const struct cbk_ctx *c, const char *type)
{
    cbk_json_begin(j, f);
    cbk_json_i64(j, "schema", CBK_SCHEMA);
    cbk_json_text(j, "type", type);
    cbk_json_text(j, "kernel", c && c->kernel ? c->kernel->name : NULL);
    if (c && c->kernel && (!strcmp(type, "measurement") || !strcmp(type, "error")))
        cbk_json_i64(j, "repetition", c->repetition);
}

void cbk_record_end(struct cbk_json *j, struct cbk_ctx *c)
{
    int failed_errno = cbk_json_end(j);
    if (failed_errno)
        cbk_fail(c, CBK_EXIT_FAILED, "cannot write the records to standard output: %s", strerror(failed_errno));
}

void cbk_started_record(struct cbk_ctx *c)
{
    if (c->size < 2 || c->rank != 0)
        return;   /* one process has no peer to wait on in MPI_Init */
    struct cbk_json j;
    cbk_record_begin(&j, c->out, c, "started");
    cbk_json_i64(&j, "ranks", c->size);
    cbk_json_i64(&j, "nodes", c->nodes);
    cbk_record_end(&j, c);
}

int cbk_check_records_out(FILE *out, char *why, size_t why_len)
{
    int fd = fileno(out), flags = fd < 0 ? -1 : fcntl(fd, F_GETFL);
    if (flags < 0) {
        int hold = fd < 0 ? -1 : open("/dev/null", O_WRONLY);
        if (hold >= 0 && hold != fd) {
            dup2(hold, fd);
            close(hold);
        }
        snprintf(why, why_len, "standard output is closed, and cbk writes its records there: "
                 "give it a file or a pipe (> records.json)");
        return -1;
    }
    if ((flags & O_ACCMODE) == O_RDONLY) {
        snprintf(why, why_len, "standard output is open for reading only, and cbk writes its records there: "
                 "give it a file or a pipe (> records.json)");
        return -1;
    }
    return 0;
}

void cbk_write_phase_words(struct cbk_json *j, const struct cbk_kernel *k)
{
    cbk_json_object(j, "phase_words");
    for (const struct cbk_phase_words *w = k ? k->phase_words : NULL; w && w->phase; w++)
        cbk_json_text(j, w->phase, w->words);
    cbk_json_close(j);
}

void cbk_write_field(struct cbk_json *j, const struct cbk_field *f)
{
    switch (f->type) {
    case CBK_F_U64: cbk_json_u64(j, f->key, f->v.u64); break;
    case CBK_F_I64: cbk_json_i64(j, f->key, f->v.i64); break;
    case CBK_F_REAL: cbk_json_real(j, f->key, f->v.real); break;
    case CBK_F_TEXT: cbk_json_text(j, f->key, f->v.text); break;
    case CBK_F_BOOL: cbk_json_bool(j, f->key, f->v.flag); break;
    case CBK_F_PAIRS:
        cbk_json_object(j, f->key);
        for (int i = 0; i < f->v.pairs.count; i++) {
            const char *item = f->v.pairs.item[i], *eq = strchr(item, '=');
            char name[256];
            snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - item) : (int)strlen(item), item);
            cbk_json_text(j, name, eq ? eq + 1 : "");
        }
        cbk_json_close(j);
        break;
    }
}

/* All of `text` to fd, as few writes as it takes (one, below a pipe's
 * PIPE_BUF, so records of ranks sharing a pipe never interleave). */
static void write_whole(int fd, const char *text, size_t len)
{
    while (len) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* nothing to do if stderr is gone */
        text += n;
        len -= (size_t)n;
    }
}

void cbk_error_record(const struct cbk_ctx *c, int status, int rank, const char *message,
                      const struct cbk_field *facts, int nfacts)
{
    /* built in memory, then written whole: stderr is unbuffered, and the JSON
     * writer's pieces went out one write(2) each, so ranks failing at once
     * interleaved their records into lines nobody could read */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    struct cbk_json j;
    cbk_record_begin(&j, mem ? mem : stderr, c, "error");
    cbk_json_i64(&j, "status", status);
    cbk_json_i64(&j, "rank", rank);
    for (int i = 0; i < nfacts; i++)
        cbk_write_field(&j, &facts[i]);
    /* messages are built with snprintf into fixed buffers: a cut may have
     * split the last character, which is dropped here for every caller */
    char whole[CBK_MESSAGE_MAX];
    snprintf(whole, sizeof whole, "%s", message ? message : "");
    cbk_utf8_trim(whole);
    cbk_json_text(&j, "message", whole);
    cbk_json_end(&j);
    if (mem && !fclose(mem))
        write_whole(STDERR_FILENO, text, len);
    free(text);
}
