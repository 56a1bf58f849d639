/* vocab.c — word counting and word <-> id maps; see vocab.h. */
#include "vocab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const SPECIALS[VOCAB_SPECIALS] = {"<pad>", "<unk>", "<sos>", "<eos>"};

/* FNV-1a, 32 bit: simple, and good enough spread for word-sized keys. */
static uint32_t hash_word(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* ------------------------------------------------------------------------- */
/* Counting                                                                   */
/* ------------------------------------------------------------------------- */

typedef struct {
    char *word;     /* NULL: empty slot */
    long count;
    uint32_t hash;
} CountSlot;

/* Open addressing with linear probing, kept at most half full. */
struct VocabCounter {
    CountSlot *slots;
    int cap;        /* power of two */
    int n;          /* distinct words */
};

VocabCounter *vocab_counter_new(void)
{
    VocabCounter *c = xmalloc(sizeof *c);
    c->cap = 1024;
    c->n = 0;
    c->slots = xcalloc((size_t)c->cap, sizeof *c->slots);
    return c;
}

/* The slot holding `word`, or the empty slot where it would go. */
static CountSlot *counter_find(const VocabCounter *c, const char *word, uint32_t h)
{
    uint32_t mask = (uint32_t)c->cap - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        CountSlot *s = &c->slots[i];
        if (!s->word || (s->hash == h && strcmp(s->word, word) == 0))
            return s;
    }
}

static void counter_grow(VocabCounter *c)
{
    CountSlot *old = c->slots;
    int old_cap = c->cap;
    c->cap *= 2;
    c->slots = xcalloc((size_t)c->cap, sizeof *c->slots);
    for (int i = 0; i < old_cap; i++)
        if (old[i].word)
            *counter_find(c, old[i].word, old[i].hash) = old[i];
    free(old);
}

void vocab_counter_add(VocabCounter *c, const char *word)
{
    uint32_t h = hash_word(word);
    CountSlot *s = counter_find(c, word, h);
    if (s->word) {
        s->count++;
        return;
    }
    *s = (CountSlot){xstrdup(word), 1, h};
    if (++c->n * 2 > c->cap)
        counter_grow(c);
}

long vocab_counter_get(const VocabCounter *c, const char *word)
{
    const CountSlot *s = counter_find(c, word, hash_word(word));
    return s->word ? s->count : 0;
}

int vocab_counter_size(const VocabCounter *c) { return c->n; }

void vocab_counter_items(const VocabCounter *c, char **words, long *counts)
{
    for (int i = 0, k = 0; i < c->cap; i++)
        if (c->slots[i].word) {
            words[k] = c->slots[i].word;
            counts[k++] = c->slots[i].count;
        }
}

void vocab_counter_free(VocabCounter *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->cap; i++)
        free(c->slots[i].word);
    free(c->slots);
    free(c);
}

/* ------------------------------------------------------------------------- */
/* Vocabularies                                                               */
/* ------------------------------------------------------------------------- */

/* The table slot for `word`: the one holding its id, or the empty one (-1)
 * where it would go. */
static int *table_find(const Vocab *v, const char *word)
{
    uint32_t mask = (uint32_t)v->table_cap - 1;
    for (uint32_t i = hash_word(word) & mask;; i = (i + 1) & mask) {
        int *slot = &v->table[i];
        if (*slot < 0 || strcmp(v->words[*slot], word) == 0)
            return slot;
    }
}

/* Takes ownership of words[0..n) as v's id -> word list and builds the hash
 * table. Returns -1, or the id of the first word equal to an earlier one (the
 * table is then incomplete and v fit only for vocab_free). */
static int vocab_index(Vocab *v, char **words, int n)
{
    v->size = n;
    v->words = words;
    v->table_cap = 16;
    while (v->table_cap < 2 * n)
        v->table_cap *= 2;
    v->table = xmalloc((size_t)v->table_cap * sizeof *v->table);
    for (int i = 0; i < v->table_cap; i++)
        v->table[i] = -1;
    for (int id = 0; id < n; id++) {
        int *slot = table_find(v, words[id]);
        if (*slot >= 0)
            return id;
        *slot = id;
    }
    return -1;
}

/* Most frequent first, then byte order (strcmp compares as unsigned char). */
static int by_count_then_bytes(const void *a, const void *b)
{
    const CountSlot *x = *(const CountSlot *const *)a, *y = *(const CountSlot *const *)b;
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
    const CountSlot **kept = xmalloc((size_t)(c->n ? c->n : 1) * sizeof *kept);
    int n_kept = 0;
    for (int i = 0; i < c->cap; i++) {
        const CountSlot *s = &c->slots[i];
        if (s->word && s->count >= min_count && !is_special(s->word))
            kept[n_kept++] = s;
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
        int first = *table_find(v, copy[dup]);
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
    int id = *table_find(v, word);
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
    free(v->table);
    *v = (Vocab){0};
}
