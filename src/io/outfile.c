/* outfile.c — a file written whole or not at all, and never through a link; see outfile.h. */
#include "io/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/signals.h"  /* defines: signals_cleanup_add, signals_cleanup_remove */
#include "base/testhook.h" /* defines: testhook_full_disk */

#define TEMP_SUFFIX ".tmp-XXXXXX"

/* The directory part of path ("." for a bare name, "/" for "/name"), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return xstrdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *dir = xmalloc(n + 1);
    memcpy(dir, path, n);
    dir[n] = 0;
    return dir;
}

/* Makes renames in dir durable. */
static void sync_dir(const char *path)
{
    char *dir = dir_of(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

int outfile_open(OutFile *o, const char *path, Error *err)
{
    memset(o, 0, sizeof *o);
    if (!strcmp(path, "-")) {  /* standard output, as "-" is standard input to every command */
        o->f = stdout;
        o->path = xstrdup("standard output");
        return 0;
    }
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return error_set(err, "%s: cannot write: %s", path, strerror(EISDIR));
    if (exists && !S_ISREG(st.st_mode)) {  /* a device or a pipe: written in place */
        o->f = fopen(path, "w");
        if (!o->f) return error_set(err, "%s: cannot write: %s", path, strerror(errno));
        o->path = xstrdup(path);
        return 0;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(path) + sizeof TEMP_SUFFIX;
    char *tmp = xmalloc(n);
    if (strlen(base) + sizeof TEMP_SUFFIX - 1 <= NAME_MAX) {
        snprintf(tmp, n, "%s" TEMP_SUFFIX, path);
    } else {  /* no room beside a name this long: a name of nmt's own */
        char *dir = dir_of(path);
        n = strlen(dir) + sizeof "/nmt" TEMP_SUFFIX;
        tmp = xrealloc(tmp, n);
        snprintf(tmp, n, "%s/nmt" TEMP_SUFFIX, dir);
        free(dir);
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        char *dir = dir_of(path);
        error_set(err, "%s: cannot write: cannot create a file in %s: %s", path, dir, strerror(errno));
        free(dir);
        free(tmp);
        return -1;
    }
    /* The old file's permissions, or what fopen would have given a new one. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask);
    if (testhook_full_disk(path)) {  /* a full disk, for the tests */
        close(fd);
        fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    }
    o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!o->f) {
        error_set(err, "%s: cannot write: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    o->path = xstrdup(path);
    o->tmp = tmp;
    signals_cleanup_add(tmp);  /* a signal that ends the process removes it */
    return 0;
}

static void outfile_free(OutFile *o)
{
    if (o->tmp) signals_cleanup_remove(o->tmp);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

int outfile_commit(OutFile *o, Error *err)
{
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int saved = errno ? errno : EIO;
    if (!bad && o->tmp && fsync(fileno(o->f)) != 0) {
        bad = 1;
        saved = errno;
    }
    if (o->f != stdout && fclose(o->f) != 0 && !bad) {  /* stdout: main closes it */
        bad = 1;
        saved = errno;
    }
    if (!bad && o->tmp && rename(o->tmp, o->path) != 0) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        if (o->tmp) {
            unlink(o->tmp);
            error_set(err, "%s: write failed: %s (the previous file, if any, is untouched)", o->path, strerror(saved));
        } else {
            error_set(err, "%s: write failed: %s", o->path, strerror(saved));
        }
    } else if (o->tmp) {
        sync_dir(o->path);
    }
    outfile_free(o);
    return bad ? -1 : 0;
}

void outfile_discard(OutFile *o)
{
    if (o->f && o->f != stdout) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    outfile_free(o);
}

size_t outfile_temporary_target(const char *name)
{
    size_t n = strlen(name), k = sizeof TEMP_SUFFIX - 1, x = sizeof "XXXXXX" - 1;
    if (n <= k || memcmp(name + n - k, TEMP_SUFFIX, k - x) != 0) return 0;
    return n - k;
}
