/* unkdict.h — the dictionary for --replace-unk: source word -> target word.
 *
 * A TSV file, "source<TAB>target" per line (the format of the training data, so a
 * lexicon extracted by any aligner can be used). Source words are normalised as the
 * model normalises its input (NFC/NFKC, case folding), so they match the tokens the
 * translator sees. The first entry for a word wins; malformed lines are skipped and
 * reported like the TSV reader reports them.
 */
#ifndef UNKDICT_H
#define UNKDICT_H

#include "io/lines.h" /* defines: LineLimit */
#include "text/text.h"  /* defines: TextOptions */
#include "base/util.h"  /* defines: Error */
#include "text/vocab.h" /* defines: Vocab */

typedef struct {
    Vocab keys;        /* the source words (after the four specials), for hashing */
    char **targets;    /* targets[id] for key id; NULL for the specials */
} UnkDict;

/* Reads path (lines up to limit, NULL: the default). Returns 0, or -1 with err naming
 * the file (unreadable, a line over the limit, or no usable line at all). Warnings about
 * skipped lines go to stderr. */
int unkdict_load(UnkDict *d, const char *path, const TextOptions *text, const LineLimit *limit, Error *err);
/* The translation of a source token, or NULL. */
const char *unkdict_lookup(const UnkDict *d, const char *word);
void unkdict_free(UnkDict *d);
#endif
