/* outfile.h — a file written whole or not at all, and never through a link.
 *
 * The text goes to a new temporary file beside the target (mkstemp: a name no one
 * else has, created by this call, never an existing file or a symbolic link someone
 * planted), and only once it is complete, flushed and on disk is it renamed over the
 * target. So until then the old file is untouched, and a failed or interrupted job
 * leaves it whole (a signal that ends the process, Ctrl-C, SIGTERM, SIGHUP or SIGPIPE,
 * removes the temporary file too: base/signals.h, signals_cleanup_add); a symbolic link at the target is replaced, never followed; and an
 * input that is also the output is read to its end before it is replaced, as sort -o
 * and sed -i do. The new file keeps the old one's permissions (a new name gets 0666
 * less the umask, as fopen would give it).
 *
 * A target that exists and is not a regular file (/dev/null, /dev/stdout, a pipe) is
 * written in place: there is nothing to rename over. The path "-" is standard output
 * (as "-" is standard input to every command), flushed by outfile_commit and left open.
 *
 *   OutFile o;
 *   if (outfile_open(&o, "out.txt", &err)) ... err.msg
 *   fputs("text\n", o.f);
 *   if (outfile_commit(&o, &err)) ... err.msg   (or outfile_discard(&o) to give up)
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <stdio.h>

#include "base/util.h" /* defines: Error */

typedef struct {
    FILE *f;     /* where to write */
    char *path;  /* the target */
    char *tmp;   /* the temporary file renamed over it; NULL when written in place */
} OutFile;

/* 0, or -1 with err naming path (a directory that cannot take a new file, a target
 * that is a directory). */
int outfile_open(OutFile *o, const char *path, Error *err);
/* Flushes, syncs and closes o.f and renames the temporary file over the target; -1
 * with err if any of it failed (the temporary file is then removed, the target
 * untouched). o is freed either way. */
int outfile_commit(OutFile *o, Error *err);
/* Gives up: closes o.f and removes the temporary file; the target is untouched. */
void outfile_discard(OutFile *o);

/* If name is the name of a temporary file outfile_open makes (TARGET.tmp-XXXXXX, what
 * a job killed while writing leaves behind), the length of its TARGET part; else 0. */
size_t outfile_temporary_target(const char *name);
#endif
