/* lines.c — text input a batch of lines at a time; see lines.h. */
#include "lines.h"

#include <stdlib.h>
#include <string.h>

#include "modelfile.h" /* defines: MODELFILE_MAGIC */

int lines_read_batches(FILE *in, const char *in_name, int batch, const char *what, const char *nul_note,
                       LineBatchFn fn, void *ctx, long *count, Error *err)
{
    char **lines = xcalloc(batch, sizeof(char *));
    size_t *caps = xcalloc(batch, sizeof(size_t));
    int n = 0, status = 0;
    ssize_t len;
    long number = 0;
    while (status == 0 && (len = getline(&lines[n], &caps[n], in)) >= 0) {
        char *line = lines[n];
        number++;
        if (number == 1 && len >= 8 && memcmp(line, MODELFILE_MAGIC, 8) == 0) {
            status = error_set(err, "%s: an nmt model file, not text to %s (one MODEL.bin comes first; the other "
                                    "arguments are text files)", in_name, what);
            break;
        }
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        if (len > 0 && line[len - 1] == '\r') line[--len] = 0;
        if ((size_t)len != strlen(line)) {
            if (nul_note) fprintf(stderr, "nmt: warning: %s line %ld: NUL byte; %s\n", in_name, number, nul_note);
            line[0] = 0;
        }
        if (++n == batch) {
            status = fn(ctx, lines, n, number - n + 1, err);
            n = 0;
        }
    }
    if (status == 0 && n > 0) status = fn(ctx, lines, n, number - n + 1, err);
    if (status == 0 && ferror(in)) status = error_set(err, "%s: read error", in_name);
    *count = number;
    for (int i = 0; i < batch; i++)
        free(lines[i]);
    free(lines);
    free(caps);
    return status;
}
