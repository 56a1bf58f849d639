#include "decode/unkdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/tsv.h" /* defines: TsvCorpus, tsv_read_pairs */

int unkdict_load(UnkDict *d, const char *path, const TextOptions *text, const LineLimit *limit, Error *err)
{
    memset(d, 0, sizeof *d);
    TsvCorpus tsv;
    if (tsv_read_pairs(path, limit, &tsv, err)) return -1;
    if (tsv.n_malformed > 0)
        fprintf(stderr, "nmt: warning: %s: %d malformed lines skipped (first: line %d, %s)\n", path, tsv.n_malformed,
                tsv.bad_lines[0], tsv.bad_reasons[0]);
    if (tsv.n == 0) {
        tsv_free(&tsv);
        return error_set(err, "%s: no dictionary entries (expected source<TAB>target lines)", path);
    }
    /* The keys as a vocabulary (which drops duplicates and words that spell a special),
     * then each key's first target. */
    char **keys = xmalloc(sizeof(char *) * tsv.n);
    VocabCounter *counter = vocab_counter_new();
    for (int i = 0; i < tsv.n; i++) {
        keys[i] = text_normalize_line(tsv.pairs[i].src, strlen(tsv.pairs[i].src), text);
        if (keys[i]) vocab_counter_add(counter, keys[i]);
    }
    vocab_build(&d->keys, counter, 1, 0);
    vocab_counter_free(counter);
    d->targets = xcalloc(d->keys.size, sizeof(char *));
    for (int i = 0; i < tsv.n; i++) {
        int id = keys[i] ? vocab_lookup(&d->keys, keys[i]) : VOCAB_UNK;
        if (id >= VOCAB_SPECIALS && !d->targets[id]) d->targets[id] = xstrdup(tsv.pairs[i].tgt);
        free(keys[i]);
    }
    free(keys);
    tsv_free(&tsv);
    return 0;
}

const char *unkdict_lookup(const UnkDict *d, const char *word)
{
    if (!d || !d->targets) return NULL;
    int id = vocab_lookup(&d->keys, word);
    return id >= VOCAB_SPECIALS ? d->targets[id] : NULL;
}

void unkdict_free(UnkDict *d)
{
    if (d->targets)
        for (int i = 0; i < d->keys.size; i++)
            free(d->targets[i]);
    free(d->targets);
    vocab_free(&d->keys);
    memset(d, 0, sizeof *d);
}
