/* vocab.c — word counting and word <-> id maps; see vocab.h. */
#include "text/vocab.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"   // defines: fnv1a_str, FNV1A_BASIS, HashTable, hash_find, hash_find_or_add

static const char *const SPECIALS[VOCAB_SPECIALS] = {"<pad>", "<unk>", "<sos>", "<eos>"};

/* A word's hash, for the word -> id tables below. */
static uint64_t hash_word(const char *word) { return fnv1a_str(FNV1A_BASIS, word); }

/* ------------------------------------------------------------------------- */
/* Counting                                                                   */
/* ------------------------------------------------------------------------- */

typedef struct {
    char *word;
    long count;
} CountEntry;

/* The words in order of first sight, each with its count (word and count side by
 * side: an add that finds its word touches one entry), and the table that finds a
 * word's entry. */
struct VocabCounter {
    CountEntry *entries;   /* (n), room for cap */
    int n, cap;
    HashTable index;       /* word -> entry */
};

static int entry_is(const void *counter, int id, const void *word)
{
    return strcmp(((const VocabCounter *)counter)->entries[id].word, word) == 0;
}

VocabCounter *vocab_counter_new(void)
{
    VocabCounter *c = xcalloc(1, sizeof *c);
    c->cap = 1024;
    c->entries = xmalloc((size_t)c->cap * sizeof *c->entries);
    return c;
}

void vocab_counter_add(VocabCounter *c, const char *word)
{
    int id = hash_find_or_add(&c->index, hash_word(word), entry_is, c, word, c->n);
    if (id < c->n) {
        c->entries[id].count++;
        return;
    }
    if (c->n == c->cap) {
        c->cap *= 2;
        c->entries = xrealloc(c->entries, (size_t)c->cap * sizeof *c->entries);
    }
    c->entries[c->n++] = (CountEntry){xstrdup(word), 1};
}

long vocab_counter_get(const VocabCounter *c, const char *word)
{
    int id = hash_find(&c->index, hash_word(word), entry_is, c, word);
    return id >= 0 ? c->entries[id].count : 0;
}

int vocab_counter_size(const VocabCounter *c) { return c->n; }

/* Byte order of the words (strcmp compares as unsigned char). */
static int by_bytes(const void *a, const void *b)
{
    return strcmp(((const CountEntry *)a)->word, ((const CountEntry *)b)->word);
}

/* Sorted, so that what a caller computes from the list (BPE learning's symbol ids,
 * its heap's shape and so its speed) depends on the words alone, not on the order
 * they came in. */
void vocab_counter_items(const VocabCounter *c, char **words, long *counts)
{
    CountEntry *sorted = xmalloc((size_t)(c->n ? c->n : 1) * sizeof *sorted);
    memcpy(sorted, c->entries, (size_t)c->n * sizeof *sorted);
    qsort(sorted, (size_t)c->n, sizeof *sorted, by_bytes);
    for (int i = 0; i < c->n; i++) {
        words[i] = sorted[i].word;
        counts[i] = sorted[i].count;
    }
    free(sorted);
}

static int is_special(const char *word);

const char *vocab_counter_top(const VocabCounter *c, long *count)
{
    const char *top = NULL;
    *count = 0;
    for (int i = 0; i < c->n; i++) {
        const CountEntry *e = &c->entries[i];
        if (is_special(e->word)) continue;
        if (e->count > *count || (e->count == *count && top && strcmp(e->word, top) < 0)) {
            top = e->word;
            *count = e->count;
        }
    }
    return top;
}

void vocab_counter_free(VocabCounter *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++)
        free(c->entries[i].word);
    free(c->entries);
    hash_free(&c->index);
    free(c);
}

/* ------------------------------------------------------------------------- */
/* Vocabularies                                                               */
/* ------------------------------------------------------------------------- */

static int word_is(const void *vocab, int id, const void *word)
{
    return strcmp(((const Vocab *)vocab)->words[id], word) == 0;
}

/* Takes ownership of words[0..n) as v's id -> word list and builds the hash
 * table. Returns -1, or the id of the first word equal to an earlier one (the
 * table is then incomplete and v fit only for vocab_free). */
static int vocab_index(Vocab *v, char **words, int n)
{
    v->size = n;
    v->words = words;
    v->index = (HashTable){0};
    hash_reserve(&v->index, n);
    for (int id = 0; id < n; id++)
        if (hash_find_or_add(&v->index, hash_word(words[id]), word_is, v, words[id], id) != id)
            return id;
    return -1;
}

/* Most frequent first, then byte order (strcmp compares as unsigned char). */
static int by_count_then_bytes(const void *a, const void *b)
{
    const CountEntry *x = *(const CountEntry *const *)a, *y = *(const CountEntry *const *)b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->word, y->word);
}

static int is_special(const char *word)
{
    for (int i = 0; i < VOCAB_SPECIALS; i++)
        if (strcmp(word, SPECIALS[i]) == 0)
            return 1;
    return 0;
}

void vocab_build(Vocab *v, const VocabCounter *c, int min_count, int max_size)
{
    const CountEntry **kept = xmalloc((size_t)(c->n ? c->n : 1) * sizeof *kept);
    int n_kept = 0;
    for (int i = 0; i < c->n; i++) {
        const CountEntry *e = &c->entries[i];
        if (e->count >= min_count && !is_special(e->word))
            kept[n_kept++] = e;
    }
    qsort(kept, (size_t)n_kept, sizeof *kept, by_count_then_bytes);

    int size = VOCAB_SPECIALS + n_kept;
    if (max_size > 0 && size > max_size)
        size = max_size < VOCAB_SPECIALS ? VOCAB_SPECIALS : max_size;
    char **words = xmalloc((size_t)size * sizeof *words);
    for (int i = 0; i < VOCAB_SPECIALS; i++)
        words[i] = xstrdup(SPECIALS[i]);
    for (int i = VOCAB_SPECIALS; i < size; i++)
        words[i] = xstrdup(kept[i - VOCAB_SPECIALS]->word);
    free(kept);
    vocab_index(v, words, size);   /* counter keys and specials are distinct */
}

int vocab_extend(Vocab *v, const VocabCounter *c, int min_count, int max_size)
{
    const CountEntry **kept = xmalloc((size_t)(c->n ? c->n : 1) * sizeof *kept);
    int n_kept = 0;
    for (int i = 0; i < c->n; i++) {
        const CountEntry *e = &c->entries[i];
        if (e->count >= min_count && !is_special(e->word) && vocab_lookup(v, e->word) == VOCAB_UNK)
            kept[n_kept++] = e;
    }
    qsort(kept, (size_t)n_kept, sizeof *kept, by_count_then_bytes);
    int room = max_size > 0 ? max_size - v->size : n_kept, added = n_kept < room ? n_kept : room > 0 ? room : 0;
    v->words = xrealloc(v->words, sizeof(char *) * (size_t)(v->size + added));
    for (int i = 0; i < added; i++) {
        int id = v->size++;
        v->words[id] = xstrdup(kept[i]->word);
        hash_find_or_add(&v->index, hash_word(v->words[id]), word_is, v, v->words[id], id);
    }
    free(kept);
    return added;
}

int vocab_from_words(Vocab *v, char *const *words, int n, Error *err)
{
    *v = (Vocab){0};
    if (n < VOCAB_SPECIALS)
        return error_set(err, "vocabulary has %d words; it needs at least the %d specials", n, VOCAB_SPECIALS);
    for (int i = 0; i < n; i++) {
        if (!words[i] || !words[i][0])
            return error_set(err, "vocabulary word %d is empty", i);
        if (i < VOCAB_SPECIALS && strcmp(words[i], SPECIALS[i]) != 0)
            return error_set(err, "vocabulary word %d is \"%.64s\", expected the special \"%s\"",
                             i, words[i], SPECIALS[i]);
    }
    char **copy = xmalloc((size_t)n * sizeof *copy);
    for (int i = 0; i < n; i++)
        copy[i] = xstrdup(words[i]);
    int dup = vocab_index(v, copy, n);
    if (dup >= 0) {
        int first = hash_find(&v->index, hash_word(copy[dup]), word_is, v, copy[dup]);
        error_set(err, "vocabulary word %d \"%.64s\" duplicates word %d", dup, copy[dup], first);
        vocab_free(v);
        return -1;
    }
    return 0;
}

int vocab_lookup(const Vocab *v, const char *word)
{
    if (!word || v->size == 0)
        return VOCAB_UNK;
    int id = hash_find(&v->index, hash_word(word), word_is, v, word);
    return id >= 0 ? id : VOCAB_UNK;
}

const char *vocab_word(const Vocab *v, int id)
{
    if (id < 0 || id >= v->size)
        return SPECIALS[VOCAB_UNK];
    return v->words[id];
}

void vocab_free(Vocab *v)
{
    for (int i = 0; i < v->size; i++)
        free(v->words[i]);
    free(v->words);
    hash_free(&v->index);
    *v = (Vocab){0};
}

/* ---------------------------------------------------------------- label sets */

static int compare_strings(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int vocab_labels(Vocab *v, char *const *labels, int n, Error *err)
{
    for (int i = 0; i < n; i++)
        if (is_special(labels[i]))
            return error_set(err, "the label \"%s\" is one of the names nmt reserves (<pad>, <unk>, <sos>, <eos>)",
                             labels[i]);
    char **words = xmalloc(sizeof(char *) * (size_t)(n + VOCAB_SPECIALS));
    for (int i = 0; i < VOCAB_SPECIALS; i++)
        words[i] = (char *)SPECIALS[i];
    char **sorted = words + VOCAB_SPECIALS;
    memcpy(sorted, labels, sizeof(char *) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(char *), compare_strings);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || strcmp(sorted[k - 1], sorted[i])) sorted[k++] = sorted[i];
    int status = vocab_from_words(v, words, VOCAB_SPECIALS + k, err);  /* distinct and not special: succeeds */
    free(words);
    return status;
}

int vocab_label_class(const Vocab *v, const char *label)
{
    int id = vocab_lookup(v, label);
    return id >= VOCAB_SPECIALS ? id - VOCAB_SPECIALS : -1;
}

const char *vocab_class_label(const Vocab *v, int c) { return vocab_word(v, c + VOCAB_SPECIALS); }
