/* vocab.h — vocabularies: word <-> id, built from token counts.
 *
 * Ids 0..3 are reserved for the special tokens the model needs; the remaining ids
 * go to corpus words, most frequent first, so that the order (and hence every
 * embedding row) is the same on every run over the same data:
 *
 *   id 0 "<pad>"   fills batches to a common length; masked out of the loss
 *   id 1 "<unk>"   any word not in the vocabulary
 *   id 2 "<sos>"   fed to the decoder as the first input
 *   id 3 "<eos>"   ends every target sentence
 *
 * Example:
 *   VocabCounter *cnt = vocab_counter_new();
 *   for each token w in the training sources: vocab_counter_add(cnt, w);
 *   Vocab v;
 *   vocab_build(&v, cnt, 2, 8000);        // words seen twice or more, 8000 ids at most
 *   vocab_counter_free(cnt);
 *   int id = vocab_lookup(&v, "house");   // VOCAB_UNK if it did not make the cut
 *   const char *w = vocab_word(&v, id);
 *   vocab_free(&v);
 */
#ifndef VOCAB_H
#define VOCAB_H

#include "base/hash.h"   // defines: HashTable
#include "base/util.h"   // defines: Error

enum { VOCAB_PAD = 0, VOCAB_UNK = 1, VOCAB_SOS = 2, VOCAB_EOS = 3, VOCAB_SPECIALS = 4 };

typedef struct {
    int size;
    char **words;        /* id -> word; ids 0..3 are "<pad>", "<unk>", "<sos>", "<eos>" */
    HashTable index;     /* word -> id */
} Vocab;

/* ------------------------------------------------------------------------- */
/* Counting                                                                   */
/* ------------------------------------------------------------------------- */

typedef struct VocabCounter VocabCounter;   /* opaque word -> count hash map */
VocabCounter *vocab_counter_new(void);
/* Counts one occurrence of `word` (copied on first sight). */
void vocab_counter_add(VocabCounter *c, const char *word);
/* How often `word` was added (0 if never). */
long vocab_counter_get(const VocabCounter *c, const char *word);
/* Number of distinct words counted. */
int vocab_counter_size(const VocabCounter *c);
/* Every counted word with its count, in byte order: words[i], counts[i] for
 * i < vocab_counter_size(c) (arrays of that length, the caller's). The strings belong
 * to the counter. */
void vocab_counter_items(const VocabCounter *c, char **words, long *counts);
/* The most frequent counted word that is not a special (ties: byte order) and its count
 * in *count; NULL and 0 if there is none. For messages about a vocabulary left empty. */
const char *vocab_counter_top(const VocabCounter *c, long *count);
void vocab_counter_free(VocabCounter *c);

/* ------------------------------------------------------------------------- */
/* Vocabularies                                                               */
/* ------------------------------------------------------------------------- */

/* Specials first, then words with count >= min_count, most frequent first, ties
 * broken by byte order of the word (so the result is deterministic), at most
 * max_size entries in total including the specials (max_size <= 0: no limit;
 * 0 < max_size <= 4 gives just the specials). Counted words that spell a special
 * ("<unk>" in the text) are left out: they would map to the special anyway. */
void vocab_build(Vocab *v, const VocabCounter *c, int min_count, int max_size);

/* Fine-tuning's growing vocabulary (train.extend_vocab): appends to v the counted
 * words it lacks that were counted min_count times or more, in vocab_build's order
 * (most frequent first, ties in byte order), until v has max_size entries (max_size
 * <= 0: no limit). Every word v had keeps its id. Returns how many were added. */
int vocab_extend(Vocab *v, const VocabCounter *c, int min_count, int max_size);

/* From a list of words in id order (used when loading a model file); words[0..3]
 * must be the specials. Returns -1 with a message (naming the id) on fewer than 4
 * words, a bad special, a NULL or empty word, or a duplicate; *v is then empty.
 * Copies the strings. */
int vocab_from_words(Vocab *v, char *const *words, int n, Error *err);

int vocab_lookup(const Vocab *v, const char *word);   /* VOCAB_UNK if absent */

/* A classifier's label set (model.type classifier) is a Vocab: the four reserved ids,
 * then the labels in byte order, class c at id c + VOCAB_SPECIALS. */
/* The set of the distinct non-empty labels[0..n-1]; -1 with err if one of them spells a
 * reserved name ("<unk>"). */
int vocab_labels(Vocab *v, char *const *labels, int n, Error *err);
int vocab_label_class(const Vocab *v, const char *label);  /* -1 if not in the set */
const char *vocab_class_label(const Vocab *v, int c);
const char *vocab_word(const Vocab *v, int id);       /* "<unk>" for out-of-range ids */
void vocab_free(Vocab *v);
#endif
