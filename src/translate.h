/* translate.h — `nmt translate`: raw lines in, translated lines out.
 *
 * A line is normalised and tokenised exactly as the training data was (the options
 * travel in the model file), mapped to ids, decoded greedily, and the output words are
 * detokenised into a sentence. Line i of the output always answers line i of the
 * input: an empty line gives an empty line, and a line that cannot be read (invalid
 * UTF-8) gives an empty line and a warning naming its number.
 */
#ifndef TRANSLATE_H
#define TRANSLATE_H

#include <stdio.h>

#include "modelfile.h" /* defines: ModelFile */

/* Longest source, in tokens, that is translated; longer ones are cut with a warning. */
#define TRANSLATE_MAX_SOURCE 400

typedef struct {
    int max_len;   /* output words at most; 0: 2 * source length + 10 */
    int batch;     /* lines decoded together (0 or 1: one at a time, each flushed at once) */
    int beam;      /* beam size; 0 or 1: greedy search */
    float length_penalty;  /* GNMT alpha for beam search (decode.h) */
} TranslateOptions;

/* Translates n lines together (one decoder batch). out[i] receives a malloc'd sentence;
 * bad[i] (may be NULL) is set to 1 for a line that is not valid UTF-8 (out[i] = ""),
 * 2 for one longer than TRANSLATE_MAX_SOURCE tokens (only its start is translated), else 0. */
void translate_lines(ModelFile *mf, RunState *rs, char *const *lines, int n, const TranslateOptions *opt,
                     char **out, int *bad);

/* Reads lines from in until EOF and writes one translation per line to out, flushing
 * after each line (after each group of opt->batch lines when batching), so that it
 * works inside a pipeline. Returns 0, or -1 on a write error. */
int translate_stream(ModelFile *mf, FILE *in, FILE *out, const char *in_name, const TranslateOptions *opt,
                     Error *err);
#endif
