#include "unkdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsv.h" /* defines: TsvCorpus, tsv_read_pairs */

int unkdict_load(UnkDict *d, const char *path, const TextOptions *text, Error *err)
{
    memset(d, 0, sizeof *d);
    TsvCorpus tsv;
    if (tsv_read_pairs(path, &tsv, err)) return -1;
    if (tsv.n_malformed > 0)
        fprintf(stderr, "nmt: warning: %s: %d malformed lines skipped (first: line %d, %s)\n", path, tsv.n_malformed,
                tsv.bad_lines[0], tsv.bad_reasons[0]);
    if (tsv.n == 0) {
        tsv_free(&tsv);
        return error_set(err, "%s: no dictionary entries (expected source<TAB>target lines)", path);
    }
    char **words = xmalloc(sizeof(char *) * (tsv.n + 4)), **targets = xmalloc(sizeof(char *) * (tsv.n + 4));
    const char *specials[4] = {"<pad>", "<unk>", "<sos>", "<eos>"};
    int n = 0;
    for (; n < 4; n++) {
        words[n] = xstrdup(specials[n]);
        targets[n] = NULL;
    }
    VocabCounter *seen = vocab_counter_new();
    for (int i = 0; i < tsv.n; i++) {
        char *key = text_normalize_line(tsv.pairs[i].src, strlen(tsv.pairs[i].src), text);
        int special = 0;
        for (int k = 0; key && k < 4; k++)
            special |= !strcmp(key, specials[k]);
        if (!key || special || vocab_counter_get(seen, key) > 0) {
            free(key);
            continue;
        }
        vocab_counter_add(seen, key);
        words[n] = key;
        targets[n] = xstrdup(tsv.pairs[i].tgt);
        n++;
    }
    vocab_counter_free(seen);
    tsv_free(&tsv);
    int status = vocab_from_words(&d->keys, words, n, err);
    for (int i = 0; i < n; i++)
        free(words[i]);
    free(words);
    if (status) {
        for (int i = 0; i < n; i++)
            free(targets[i]);
        free(targets);
        Error inner = *err;
        return error_set(err, "%s: %s", path, inner.msg);
    }
    d->targets = targets;
    return 0;
}

const char *unkdict_lookup(const UnkDict *d, const char *word)
{
    if (!d || !d->targets) return NULL;
    int id = vocab_lookup(&d->keys, word);
    return id > 3 ? d->targets[id] : NULL;
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
