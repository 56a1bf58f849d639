/* test_vocab.c — counting words and building vocabularies (src/text/vocab.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/vocab.h"   // defines: VocabCounter, vocab_build, vocab_from_words, vocab_lookup

static void add_n(VocabCounter *c, const char *word, int times)
{
    for (int i = 0; i < times; i++)
        vocab_counter_add(c, word);
}

/* v's words, in id order, equal the NULL-terminated list `want`. */
static int words_are(const Vocab *v, const char *const *want)
{
    int n = 0;
    while (want[n])
        n++;
    int ok = v->size == n;
    for (int i = 0; ok && i < n; i++)
        ok = strcmp(v->words[i], want[i]) == 0;
    if (!ok) {
        fprintf(stderr, "  got %d words:", v->size);
        for (int i = 0; i < v->size; i++)
            fprintf(stderr, " %s", v->words[i]);
        fprintf(stderr, "\n");
    }
    return ok;
}

#define WORDS_ARE(v, ...) words_are(v, (const char *const[]){"<pad>", "<unk>", "<sos>", "<eos>", __VA_ARGS__ NULL})

static VocabCounter *sample_counts(void)
{
    VocabCounter *c = vocab_counter_new();
    add_n(c, "dog", 2);
    add_n(c, "cat", 3);
    add_n(c, "the", 5);
    add_n(c, "zebra", 1);
    add_n(c, "a", 3);
    add_n(c, "<unk>", 4);   /* literally in the text: must not become a second "<unk>" */
    return c;
}

static void test_counter(void)
{
    VocabCounter *c = sample_counts();
    CHECK(vocab_counter_get(c, "the") == 5 && vocab_counter_get(c, "cat") == 3 &&
          vocab_counter_get(c, "zebra") == 1, "counts");
    CHECK(vocab_counter_get(c, "horse") == 0, "unseen word counts 0");
    CHECK(vocab_counter_size(c) == 6, "distinct words");
    char *words[6];
    long counts[6];
    vocab_counter_items(c, words, counts);
    const char *in_order[6] = {"<unk>", "a", "cat", "dog", "the", "zebra"};
    const long their_counts[6] = {4, 3, 3, 2, 5, 1};
    int ok_items = 1;
    for (int i = 0; i < 6; i++)
        ok_items = ok_items && strcmp(words[i], in_order[i]) == 0 && counts[i] == their_counts[i];
    CHECK(ok_items, "vocab_counter_items: every word with its count, in byte order");
    vocab_counter_free(c);

    /* Past the initial table size, every count must survive rehashing. */
    c = vocab_counter_new();
    char word[32];
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 5000; i++) {
            snprintf(word, sizeof word, "w%d", i);
            add_n(c, word, i % 3 == 0 ? 2 : 1);
        }
    int ok = vocab_counter_size(c) == 5000;
    for (int i = 0; i < 5000; i++) {
        snprintf(word, sizeof word, "w%d", i);
        ok = ok && vocab_counter_get(c, word) == (i % 3 == 0 ? 6 : 3);
    }
    CHECK(ok, "5000 words through rehashing");
    vocab_counter_free(c);
    vocab_counter_free(NULL);
}

static void test_build(void)
{
    VocabCounter *c = sample_counts();
    Vocab v;

    vocab_build(&v, c, 1, 0);
    /* a and cat tie on 3: byte order puts "a" first. */
    CHECK(WORDS_ARE(&v, "the", "a", "cat", "dog", "zebra",), "frequency order, ties by bytes, no duplicate <unk>");
    CHECK(vocab_lookup(&v, "the") == 4 && vocab_lookup(&v, "zebra") == 8, "lookup ids");
    CHECK(vocab_lookup(&v, "<unk>") == VOCAB_UNK && vocab_lookup(&v, "<pad>") == VOCAB_PAD &&
          vocab_lookup(&v, "<sos>") == VOCAB_SOS && vocab_lookup(&v, "<eos>") == VOCAB_EOS, "specials");
    CHECK(vocab_lookup(&v, "horse") == VOCAB_UNK && vocab_lookup(&v, "") == VOCAB_UNK &&
          vocab_lookup(&v, NULL) == VOCAB_UNK && vocab_lookup(&v, "The") == VOCAB_UNK, "unknown words");
    CHECK(strcmp(vocab_word(&v, 5), "a") == 0 && strcmp(vocab_word(&v, VOCAB_EOS), "<eos>") == 0, "vocab_word");
    CHECK(strcmp(vocab_word(&v, -1), "<unk>") == 0 && strcmp(vocab_word(&v, v.size), "<unk>") == 0 &&
          strcmp(vocab_word(&v, 1 << 30), "<unk>") == 0, "out-of-range ids give <unk>");
    CHECK(v.index.cap >= 2 * v.size && (v.index.cap & (v.index.cap - 1)) == 0, "index capacity power of two >= 2*size");
    vocab_free(&v);

    vocab_build(&v, c, 3, 0);
    CHECK(WORDS_ARE(&v, "the", "a", "cat",), "min_count 3");
    CHECK(vocab_lookup(&v, "dog") == VOCAB_UNK, "below min_count: unknown");
    vocab_free(&v);

    vocab_build(&v, c, 1, 6);
    CHECK(WORDS_ARE(&v, "the", "a",), "max_size 6 counts the specials");
    vocab_free(&v);

    vocab_build(&v, c, 1, 2);
    CHECK(WORDS_ARE(&v,), "max_size below 4: specials only");
    vocab_free(&v);

    vocab_build(&v, c, 10, 0);
    CHECK(WORDS_ARE(&v,), "nothing frequent enough: specials only");
    vocab_free(&v);
    vocab_counter_free(c);

    /* Byte order, not locale: uppercase < lowercase < UTF-8 lead bytes. */
    c = vocab_counter_new();
    vocab_counter_add(c, "\xC3\xA9t\xC3\xA9");
    vocab_counter_add(c, "zoo");
    vocab_counter_add(c, "Zoo");
    vocab_counter_add(c, "\xE0\xA4\x98\xE0\xA4\xB0");
    vocab_build(&v, c, 1, 0);
    CHECK(WORDS_ARE(&v, "Zoo", "zoo", "\xC3\xA9t\xC3\xA9", "\xE0\xA4\x98\xE0\xA4\xB0",), "ties in unsigned byte order");
    vocab_free(&v);
    vocab_counter_free(c);

    VocabCounter *empty = vocab_counter_new();
    vocab_build(&v, empty, 1, 0);
    CHECK(WORDS_ARE(&v,) && vocab_lookup(&v, "x") == VOCAB_UNK, "empty counter: specials only");
    vocab_free(&v);
    long top_count;
    CHECK(vocab_counter_top(empty, &top_count) == NULL && top_count == 0, "empty counter: no top word");
    vocab_counter_free(empty);

    /* The most frequent word, for the message about data.min_count: "<unk>" (4) in the
     * text does not count; of cat and a (3 each) byte order picks a. */
    c = sample_counts();
    const char *top = vocab_counter_top(c, &top_count);
    CHECK(top && !strcmp(top, "the") && top_count == 5, "vocab_counter_top: the, 5 (not <unk>)");
    add_n(c, "a", 2);
    top = vocab_counter_top(c, &top_count);
    CHECK(top && !strcmp(top, "a") && top_count == 5, "vocab_counter_top: a tie of 5 goes to byte order (a < the)");
    vocab_counter_free(c);
}

/* The same counts added in a different order must give the same vocabulary. */
static void test_deterministic(void)
{
    VocabCounter *a = vocab_counter_new(), *b = vocab_counter_new();
    char word[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(word, sizeof word, "w%d", i);
        add_n(a, word, 1 + i % 7);
    }
    for (int i = 2999; i >= 0; i--) {
        snprintf(word, sizeof word, "w%d", i);
        add_n(b, word, 1 + i % 7);
    }
    Vocab va, vb;
    vocab_build(&va, a, 2, 1000);
    vocab_build(&vb, b, 2, 1000);
    int same = va.size == 1000 && vb.size == 1000;
    for (int i = 0; same && i < va.size; i++)
        same = strcmp(va.words[i], vb.words[i]) == 0;
    CHECK(same, "insertion order does not matter");
    /* Counts never increase along the ids. */
    int sorted = 1;
    for (int i = VOCAB_SPECIALS + 1; i < va.size; i++)
        sorted = sorted && vocab_counter_get(a, va.words[i - 1]) >= vocab_counter_get(a, va.words[i]);
    CHECK(sorted, "ids in decreasing count order");
    vocab_free(&va);
    vocab_free(&vb);
    vocab_counter_free(a);
    vocab_counter_free(b);
}

static void test_from_words(void)
{
    VocabCounter *c = sample_counts();
    Vocab built, loaded;
    Error err = {{0}};
    vocab_build(&built, c, 1, 0);
    CHECK(vocab_from_words(&loaded, built.words, built.size, &err) == 0, "round trip: accepted");
    int same = loaded.size == built.size;
    for (int i = 0; same && i < built.size; i++)
        same = strcmp(loaded.words[i], built.words[i]) == 0 && loaded.words[i] != built.words[i] &&
               vocab_lookup(&loaded, built.words[i]) == i;
    CHECK(same, "round trip: same ids, strings copied");
    vocab_free(&built);
    CHECK(vocab_lookup(&loaded, "cat") == 6, "loaded vocab independent of the original");
    vocab_free(&loaded);
    vocab_counter_free(c);

    char *dup[] = {"<pad>", "<unk>", "<sos>", "<eos>", "a", "b", "a"};
    Vocab v;
    CHECK(vocab_from_words(&v, dup, 7, &err) == -1, "duplicate rejected");
    CHECK(strstr(err.msg, "word 6") && strstr(err.msg, "word 4") && strstr(err.msg, "\"a\""),
          "duplicate message names both ids and the word");
    CHECK(v.size == 0 && vocab_lookup(&v, "a") == VOCAB_UNK, "failed load leaves an empty vocab");
    vocab_free(&v);

    char *dup_special[] = {"<pad>", "<unk>", "<sos>", "<eos>", "<unk>"};
    CHECK(vocab_from_words(&v, dup_special, 5, &err) == -1 && strstr(err.msg, "word 4"), "duplicate special rejected");

    char *swapped[] = {"<pad>", "<sos>", "<unk>", "<eos>", "a"};
    CHECK(vocab_from_words(&v, swapped, 5, &err) == -1 && strstr(err.msg, "word 1") && strstr(err.msg, "<unk>"),
          "misplaced special rejected");

    CHECK(vocab_from_words(&v, swapped, 3, &err) == -1 && strstr(err.msg, "3 words"), "too few words rejected");

    char *empty[] = {"<pad>", "<unk>", "<sos>", "<eos>", ""};
    CHECK(vocab_from_words(&v, empty, 5, &err) == -1 && strstr(err.msg, "word 4"), "empty word rejected");

    /* A large list: every word found at its id. */
    int n = 5000;
    char **many = xmalloc((size_t)n * sizeof *many);
    for (int i = 0; i < n; i++) {
        many[i] = xmalloc(16);
        if (i < VOCAB_SPECIALS)
            strcpy(many[i], dup[i]);
        else
            snprintf(many[i], 16, "w%d", i);
    }
    CHECK(vocab_from_words(&v, many, n, &err) == 0, "5000 words accepted");
    int ok = v.index.cap >= 2 * n;
    for (int i = 0; i < n; i++)
        ok = ok && vocab_lookup(&v, many[i]) == i && strcmp(vocab_word(&v, i), many[i]) == 0;
    CHECK(ok, "5000 words: lookup and vocab_word agree");
    vocab_free(&v);
    for (int i = 0; i < n; i++)
        free(many[i]);
    free(many);
}

/* vocab_extend (train.extend_vocab): the old words keep their ids; the new ones come
 * after them in vocab_build's order (count, then bytes), those seen min_count times,
 * up to max_size entries; a word already there or a special is not added again. */
static void test_extend(void)
{
    VocabCounter *old = vocab_counter_new();
    add_n(old, "the", 5);
    add_n(old, "cat", 2);
    Vocab v;
    vocab_build(&v, old, 1, 0);
    VocabCounter *fresh = vocab_counter_new();
    add_n(fresh, "dog", 4);
    add_n(fresh, "the", 9);    /* there already: keeps id 4 */
    add_n(fresh, "bird", 4);   /* ties with dog: byte order */
    add_n(fresh, "ant", 1);    /* below min_count 2 */
    add_n(fresh, "<eos>", 7);  /* a special: never added */
    add_n(fresh, "zebra", 3);
    int added = vocab_extend(&v, fresh, 2, 0);
    CHECK(added == 3 && WORDS_ARE(&v, "the", "cat", "bird", "dog", "zebra",),
          "extend: old ids kept, new words after them by count then bytes, min_count applied");
    CHECK(vocab_lookup(&v, "dog") == 7 && vocab_lookup(&v, "the") == 4 && vocab_lookup(&v, "ant") == VOCAB_UNK,
          "extend: lookups of old and new words");
    CHECK(vocab_extend(&v, fresh, 2, 0) == 0 && v.size == 9, "extend again with the same counts: nothing added");
    vocab_free(&v);
    vocab_build(&v, old, 1, 0);
    CHECK(vocab_extend(&v, fresh, 1, 8) == 2 && WORDS_ARE(&v, "the", "cat", "bird", "dog",),
          "extend: up to max_size entries, the most frequent first");
    CHECK(vocab_extend(&v, fresh, 1, 5) == 0 && v.size == 8, "extend: a vocabulary at max_size or over grows no more");
    vocab_free(&v);
    vocab_counter_free(old);
    vocab_counter_free(fresh);
}

int main(void)
{
    test_counter();
    test_build();
    test_deterministic();
    test_from_words();
    test_extend();
    return check_report("test_vocab");
}
