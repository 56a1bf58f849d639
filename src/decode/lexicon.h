/* lexicon.h — the vocabulary shortlist's file (models/shortlist.h): learnt from sentence
 * pairs for one model (`nmt shortlist`), read back for decoding (`--shortlist FILE`).
 *
 * The file is text, one kept pair of units per line, in the model's units (its words,
 * or its BPE or SentencePiece pieces):
 *
 *   SOURCE<TAB>TARGET<TAB>P       keep TARGET when SOURCE is in the batch; P is how
 *                                 often TARGET was in the pairs that had SOURCE
 *                                 (co-occurrence: count(SOURCE, TARGET) / count(SOURCE))
 *   <TAB>TARGET<TAB>COUNT         keep TARGET in every batch: the most frequent units
 *
 * so that it can be read, pruned with awk (say `$3 >= 0.05 || $1 == ""`) or made by
 * another tool (an aligner's lexical table, as Marian's shortlists are). Learning keeps,
 * for each source unit, its per_word targets of highest P (ties: the more frequent
 * target first), and the `frequent` most frequent target units. Pairs of
 * more than TRANSLATE_MAX_SOURCE units on a side are left out, as nmt eval does.
 * Memory grows with the distinct (source, target) pairs seen: bounded by the product of
 * the vocabularies.
 */
#ifndef LEXICON_H
#define LEXICON_H

#include "base/util.h"        /* defines: Error */
#include "files/modelfile.h"  /* defines: ModelFile */
#include "io/lines.h"         /* defines: LineLimit */
#include "models/shortlist.h" /* defines: Shortlist */

typedef struct {
    long pairs;       /* sentence pairs counted */
    long sources;     /* source units with a line */
    long lines;       /* lines written */
} LexiconStats;

/* Learns mf's shortlist from the pairs of tsv_path and writes it to out (an OutFile's
 * path, "-": standard output). 0, or -1 with err naming the file. */
int lexicon_learn(const ModelFile *mf, const char *tsv_path, const LineLimit *limit, int per_word, int frequent,
                  const char *out, LexiconStats *stats, Error *err);

/* Reads path (as lexicon_learn writes it) into sl for mf's vocabularies; a unit the
 * model does not have is skipped and counted in *unknown. 0, or -1 with err naming the
 * file and line of the first line that is not SOURCE<TAB>TARGET<TAB>NUMBER. */
int lexicon_read(const char *path, const ModelFile *mf, const LineLimit *limit, Shortlist *sl, long *unknown,
                 Error *err);
#endif
