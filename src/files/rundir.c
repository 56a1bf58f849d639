/* rundir.c — output.dir as nmt train's own; see rundir.h. */
#include "files/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/signals.h"    /* defines: signals_cleanup_add, signals_cleanup_add_dir, signals_cleanup_remove */
#include "files/modelfile.h" /* defines: modelfile_has_magic */
#include "io/outfile.h"   /* defines: outfile_temporary_target */

/* train.lock's first line: what makes a directory an nmt run directory. */
#define RUN_MARK "nmt run directory (nmt train writes here; this file locks it while a run is going)\n"

static const char *const run_files[] = {"config.json", "train.log", "valid.tsv",      "model.bin", "best.bin",
                                        "training.svg", "checkpoint.bin", "train.lock", NULL};

/* checkpoint-STEP.bin */
static int is_checkpoint_name(const char *name, size_t len)
{
    const char *prefix = "checkpoint-";
    size_t n = strlen(prefix), digits = 0;
    if (len <= n || strncmp(name, prefix, n)) return 0;
    while (n + digits < len && name[n + digits] >= '0' && name[n + digits] <= '9')
        digits++;
    return digits > 0 && len - n - digits == 4 && !strncmp(name + n + digits, ".bin", 4);
}

static int is_run_name(const char *name, size_t len)
{
    for (int i = 0; run_files[i]; i++)
        if (strlen(run_files[i]) == len && !strncmp(name, run_files[i], len)) return 1;
    return is_checkpoint_name(name, len);
}

int rundir_is_run_file(const char *name) { return is_run_name(name, strlen(name)); }

/* A run file's temporary (NAME.tmp-XXXXXX), or checkpoint.bin's link being made. */
static int is_leftover(const char *name)
{
    size_t target = outfile_temporary_target(name);
    return (target > 0 && is_run_name(name, target)) || !strcmp(name, "checkpoint.bin.tmp");
}

/* Notes path (malloc'd, taken) as made by rundir_open, for rundir_abandon and signals. */
static void note_made(RunDir *rd, char *path, int is_dir)
{
    rd->made = xrealloc(rd->made, sizeof(char *) * (size_t)(rd->n_made + 1));
    rd->made[rd->n_made++] = path;
    if (is_dir) signals_cleanup_add_dir(path);
    else signals_cleanup_add(path);
}

/* mkdir -p dir, each directory made noted (rd->made_dir the outermost). */
static int make_dirs(const char *dir, RunDir *rd, Error *err)
{
    char *p = xstrdup(dir);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == 0) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0777) == 0) {
                if (!rd->made_dir) rd->made_dir = xstrdup(p);
                note_made(rd, xstrdup(p), 1);
            } else if (errno != EEXIST) {
                error_set(err, "%s: cannot create directory: %s", p, strerror(errno));
                free(p);
                return -1;
            }
            *s = c;
            if (!c) break;
        }
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return error_set(err, "%s: not a directory", dir);
    return 0;
}

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* 1 if dir/train.lock is nmt's: a regular file, empty or opening with the mark; 0 if
 * there is none; -1 with err if something else holds the name. */
static int has_mark(const char *dir, Error *err)
{
    char *path = path_in(dir, "train.lock");
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int status = 0;
    if (fd < 0) {
        if (errno != ENOENT) status = error_set(err, "%s: %s", path, strerror(errno));
        goto done;
    }
    struct stat st;
    char head[sizeof RUN_MARK - 1];
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof head) : -1;
    close(fd);
    if (got == 0 || (got == (ssize_t)sizeof head && !memcmp(head, RUN_MARK, sizeof head))) status = 1;
    else
        status = error_set(err, "%s: not the lock file nmt train makes (not a regular file, or another program's "
                                "file): move it, or choose another output.dir", path);
done:
    free(path);
    return status;
}

int rundir_holds(const char *dir, const char *path)
{
    struct stat file;
    if (stat(path, &file) != 0) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int held = 0;
    for (struct dirent *e; !held && (e = readdir(d)) != NULL;) {
        struct stat st;
        char *entry = path_in(dir, e->d_name);
        held = stat(entry, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == file.st_dev && st.st_ino == file.st_ino;
        free(entry);
    }
    closedir(d);
    return held;
}

int rundir_is_marked(const char *dir)
{
    Error ignored;
    return has_mark(dir, &ignored) == 1;
}

/* The checks of rundir.h on an existing directory. */
static int check_entries(const char *dir, const RunInput *inputs, int n, int resumed_config, Error *err)
{
    int marked = has_mark(dir, err);
    if (marked < 0) return -1;
    DIR *d = opendir(dir);
    if (!d) return error_set(err, "%s: cannot list: %s", dir, strerror(errno));
    int status = 0;
    for (struct dirent *e; status == 0 && (e = readdir(d)) != NULL;) {
        const char *name = e->d_name;
        if (!rundir_is_run_file(name)) continue;
        char *path = path_in(dir, name);
        struct stat st;
        if (lstat(path, &st) != 0) {
            /* gone since the listing */
        } else if (S_ISLNK(st.st_mode)) {
            status = error_set(err, "%s: a symbolic link where nmt train writes its %s: nmt does not write through "
                                    "links it did not make; remove it, or choose another output.dir", path, name);
        } else if (!marked && strcmp(name, "train.lock") != 0) {
            status = error_set(err, "%s: %s (%s holds no train.lock, the mark of an nmt run directory), and a run "
                                    "there would replace it: move it, or choose a new or empty output.dir", path,
                               modelfile_has_magic(path) ? "an nmt model file, but not of a run here"
                                                         : "not written by nmt train", dir);
        } else {
            for (int i = 0; i < n && status == 0; i++) {
                if (!inputs[i].path || !same_file(inputs[i].path, path)) continue;
                if (resumed_config && i == 0 && !strcmp(name, "config.json")) continue;
                status = error_set(err, "%s: %s is %s, a file nmt train writes in output.dir %s: a run would "
                                        "overwrite it while reading it; copy it elsewhere, or choose another "
                                        "output.dir", inputs[i].key, inputs[i].path, path, dir);
            }
        }
        free(path);
    }
    closedir(d);
    return status;
}

/* Removes the temporary files of a run killed while writing. */
static void remove_leftovers(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!is_leftover(e->d_name)) continue;
        char *path = path_in(dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode)) unlink(path);  /* unlink never follows a link */
        free(path);
    }
    closedir(d);
}

/* Locks dir/train.lock, writing the mark into it if it is new or empty; *made: it is new. */
static int lock(const char *dir, int *fd, int *made, Error *err)
{
    char *path = path_in(dir, "train.lock");
    int status = 0;
    *fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    *made = *fd >= 0;
    if (*fd < 0 && errno == EEXIST) *fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0) {
        status = error_set(err, "%s: cannot create: %s", path, strerror(errno));
        goto done;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(*fd, F_SETLK, &fl) == 0) {
        struct stat st;
        if (fstat(*fd, &st) == 0 && st.st_size == 0 &&
            write(*fd, RUN_MARK, sizeof RUN_MARK - 1) != (ssize_t)(sizeof RUN_MARK - 1))
            status = error_set(err, "%s: cannot write: %s", path, strerror(errno));
        goto done;
    }
    int busy = errno == EACCES || errno == EAGAIN;
    struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    long pid = busy && fcntl(*fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? (long)who.l_pid : 0;
    close(*fd);
    *fd = -1;
    if (!busy) goto done;  /* no locks on this file system: unguarded */
    if (pid > 0) status = error_set(err, "%s is in use by another nmt train (process %ld holds %s)", dir, pid, path);
    else status = error_set(err, "%s is in use by another nmt train (it holds %s)", dir, path);
done:
    free(path);
    return status;
}

int rundir_open(const char *dir, const RunInput *inputs, int n, int resumed_config, RunDir *rd, Error *err)
{
    memset(rd, 0, sizeof *rd);
    rd->lock_fd = -1;
    struct stat st;
    int existed = stat(dir, &st) == 0;
    if (!existed && make_dirs(dir, rd, err)) goto refused;
    if (existed && !S_ISDIR(st.st_mode)) return error_set(err, "%s: not a directory", dir);
    if (existed && check_entries(dir, inputs, n, resumed_config, err)) return -1;
    if (lock(dir, &rd->lock_fd, &rd->made_lock, err)) goto refused;
    if (rd->made_lock) note_made(rd, path_in(dir, "train.lock"), 0);
    remove_leftovers(dir);  /* under the lock: no live run is writing them */
    return 0;
refused:
    rundir_abandon(rd);
    return -1;
}

void rundir_keep(RunDir *rd)
{
    for (int i = 0; i < rd->n_made; i++) {
        signals_cleanup_remove(rd->made[i]);
        free(rd->made[i]);
    }
    free(rd->made);
    rd->made = NULL;
    rd->n_made = rd->made_lock = 0;
}

void rundir_close(RunDir *rd)
{
    rundir_keep(rd);
    if (rd->lock_fd >= 0) close(rd->lock_fd);  /* releases the lock */
    free(rd->made_dir);
    memset(rd, 0, sizeof *rd);
    rd->lock_fd = -1;
}

void rundir_abandon(RunDir *rd)
{
    /* Innermost first: train.lock, then the directories, as long as they are empty. */
    for (int i = rd->n_made - 1; i >= 0; i--) {
        if (rd->made_lock && i == rd->n_made - 1) unlink(rd->made[i]);
        else rmdir(rd->made[i]);
    }
    rundir_close(rd);
}
