#include "files/checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* dir/NAME, NAME printf-formatted (malloc'd). */
static char *path_in(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *path_in(const char *dir, const char *fmt, ...)
{
    char name[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* The STEP of a file named checkpoint-STEP.bin, or -1 for any other name. */
static long step_of(const char *name)
{
    const char *prefix = "checkpoint-";
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n)) return -1;
    const char *p = name + n;
    long step = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (digits == 15) return -1;
        step = step * 10 + (*p - '0');
    }
    return digits > 0 && !strcmp(p, ".bin") ? step : -1;
}

static int by_step_descending(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

int checkpoint_list(const char *dir, long **steps, Error *err)
{
    *steps = NULL;
    DIR *d = opendir(dir);
    if (!d) return error_set(err, "%s: cannot list: %s", dir, strerror(errno));
    int n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        long step = step_of(e->d_name);
        if (step < 0) continue;
        if (n == cap) *steps = xrealloc(*steps, sizeof(long) * (cap = cap ? 2 * cap : 16));
        (*steps)[n++] = step;
    }
    closedir(d);
    if (n > 1) qsort(*steps, n, sizeof(long), by_step_descending);
    return n;
}

/* Makes renames and links in dir durable. */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* dir/checkpoint.bin becomes the file `file` (a hard link; a copy of mf where the file
 * system has none), replaced in one rename so that the name always holds a whole file. */
static int link_stable_name(const char *dir, const char *file, const ModelFile *mf, Error *err)
{
    char *tmp = path_in(dir, "checkpoint.bin.tmp"), *stable = path_in(dir, "checkpoint.bin");
    int status = 0;
    unlink(tmp);
    if (link(file, tmp) == 0) {
        if (rename(tmp, stable) != 0)
            status = error_set(err, "%s: cannot replace: %s (%s is whole)", stable, strerror(errno), file);
        /* Renaming a link over another link to the same file does nothing: tidy up. */
        unlink(tmp);
        if (status == 0) sync_dir(dir);
    } else {
        status = modelfile_write(stable, mf, err);
    }
    free(tmp);
    free(stable);
    return status;
}

int checkpoint_save(const char *dir, const ModelFile *mf, int keep, char *path, size_t path_len, Error *err)
{
    char *file = path_in(dir, "checkpoint-%ld.bin", mf->step);
    int status = modelfile_write(file, mf, err);
    if (status == 0) status = link_stable_name(dir, file, mf, err);
    if (status == 0 && path) snprintf(path, path_len, "%s", file);
    free(file);
    if (status || keep <= 0) return status;

    /* The new checkpoint is durable: now the oldest may go. */
    long *steps;
    int n = checkpoint_list(dir, &steps, err);
    if (n < 0) return -1;
    for (int i = keep; i < n; i++) {
        if (steps[i] == mf->step) continue;
        char *old = path_in(dir, "checkpoint-%ld.bin", steps[i]);
        if (unlink(old) != 0 && errno != ENOENT) {
            error_set(err, "%s: cannot delete an old checkpoint: %s", old, strerror(errno));
            free(old);
            free(steps);
            return -1;
        }
        free(old);
    }
    free(steps);
    sync_dir(dir);
    return 0;
}

int checkpoint_load_newest(const char *dir, ModelFile *mf, char *path, char *warning, size_t len, Error *err)
{
    warning[0] = 0;
    path[0] = 0;
    long *steps;
    int n = checkpoint_list(dir, &steps, err);
    if (n <= 0) return n;
    char first[ERROR_LEN] = "";
    int skipped = 0, found = 0;
    for (int i = 0; i < n && !found; i++) {
        char *file = path_in(dir, "checkpoint-%ld.bin", steps[i]);
        Error why;
        if (modelfile_read(file, mf, &why) == 0) {
            if (mf->has_train_state && mf->step == steps[i]) {
                found = 1;
                snprintf(path, len, "%s", file);
            } else {
                snprintf(why.msg, sizeof why.msg, "%s: %s", file,
                         mf->has_train_state ? "its step disagrees with its name"
                                             : "no training state (section TRST): not a resumable checkpoint");
                modelfile_free(mf);
            }
        }
        if (!found && skipped++ == 0) snprintf(first, sizeof first, "%s", why.msg);
        free(file);
    }
    free(steps);
    if (!found)
        return error_set(err, "%s: no checkpoint can be resumed from (%d tried); the newest: %s", dir, n, first);
    if (skipped == 1)
        snprintf(warning, len, "%s; resuming from %s instead", first, path);
    else if (skipped > 1)
        snprintf(warning, len, "%d newer checkpoints cannot be read (the newest: %s); resuming from %s", skipped,
                 first, path);
    return 1;
}

int checkpoint_remove_all(const char *dir, Error *err)
{
    long *steps;
    int n = checkpoint_list(dir, &steps, err);
    if (n < 0) return -1;
    int removed = 0;
    for (int i = 0; i <= n; i++) {
        char *file = i < n ? path_in(dir, "checkpoint-%ld.bin", steps[i]) : path_in(dir, "checkpoint.bin");
        if (unlink(file) == 0) removed += i < n;
        else if (errno != ENOENT) {
            error_set(err, "%s: cannot delete: %s", file, strerror(errno));
            free(file);
            free(steps);
            return -1;
        }
        free(file);
    }
    free(steps);
    sync_dir(dir);
    return removed;
}
