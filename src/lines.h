/* lines.h — text input read a batch of lines at a time: what nmt translate and nmt
 * classify both do with each input file.
 *
 * Each line is passed without its line end ("\n" or "\r\n"). A line holding a NUL
 * byte is passed empty, with a warning naming it (nul_note says what becomes of it:
 * "translated as empty"; NULL: no warning, the caller says it). An nmt model file
 * given as text (its magic on line 1) is refused: the commands take one MODEL.bin
 * first, and a second one among the inputs is a mistake, not text.
 */
#ifndef LINES_H
#define LINES_H

#include <stdio.h>

#include "util.h" /* defines: Error */

/* Called with lines[0..n-1], lines first_number.. (1-based) of the input; returns 0,
 * or -1 with err to stop reading. */
typedef int (*LineBatchFn)(void *ctx, char **lines, int n, long first_number, Error *err);

/* Reads in (in_name in messages) to its end, batch lines at a time (the last batch
 * may be shorter), through fn; what names the job ("translate") in the model-file
 * message. 0 with *count the lines read, or -1 with err: fn's error, a model file, a
 * read error. */
int lines_read_batches(FILE *in, const char *in_name, int batch, const char *what, const char *nul_note,
                       LineBatchFn fn, void *ctx, long *count, Error *err);
#endif
