/* targets.c — what an output may replace; see targets.h. */
#include "files/targets.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files/modelfile.h" /* defines: modelfile_has_magic */
#include "files/rundir.h"    /* defines: rundir_is_run_file, rundir_is_marked */

/* 1 if the target entry t (lstat) is input (its entry, or the file it leads to). */
static int is_input(const struct stat *t, const char *input)
{
    struct stat entry, file;
    if (lstat(input, &entry) == 0 && entry.st_dev == t->st_dev && entry.st_ino == t->st_ino) return 1;
    return !S_ISLNK(t->st_mode) && stat(input, &file) == 0 && file.st_dev == t->st_dev && file.st_ino == t->st_ino;
}

int target_check(const char *option, const char *path, TargetKind kind, const TargetInput *inputs, int n,
                 const char *own_run_file, Error *err)
{
    struct stat t;
    if (!strcmp(path, "-") || lstat(path, &t) != 0) return 0;  /* standard output; a new file */
    for (int i = 0; i < n; i++)
        if (inputs[i].path && is_input(&t, inputs[i].path))
            return error_set(err, "%s: %s names %s (%s), which the output would replace: write the output elsewhere",
                             path, option, inputs[i].what, inputs[i].path);
    if (kind != TARGET_MODEL && modelfile_has_magic(path))
        return error_set(err, "%s: an nmt model file, which %s would replace with something else: choose another "
                              "name, or remove it first", path, option);
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (!rundir_is_run_file(base) || (own_run_file && !strcmp(base, own_run_file))) return 0;
    size_t len = !slash || slash == path ? 1 : (size_t)(slash - path);
    char *dir = xmalloc(len + 1);
    memcpy(dir, slash ? path : ".", len);
    dir[len] = 0;
    int marked = rundir_is_marked(dir);
    free(dir);
    if (marked)
        return error_set(err, "%s: a file of an nmt run directory (its train.lock marks it), which nmt train keeps: "
                              "%s would replace it; choose another name", path, option);
    return 0;
}
