/* test_corpus.c — from sentence pairs to padded batches: tokenising and filtering,
 * the train/validation split, vocabulary ids (src/data/corpus.c), and the batch layout and
 * epoch order (src/data/batch.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/batch.h"  /* defines: Example, Batch, batch_fill, batch_fill_source, batch_epoch_order */
#include "check.h"
#include "data/corpus.h" /* defines: PairTokens, corpus_tokenize, corpus_split, corpus_count, corpus_encode */
#include "data/tsv.h"    /* defines: TsvCorpus, tsv_parse */
#include "text/vocab.h"  /* defines: Vocab, VOCAB_* */

static int tokens_are(const TokenList *t, const char *const *want)
{
    int n = 0;
    while (want[n])
        n++;
    if (t->n != n) return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(t->tokens[i], want[i])) return 0;
    return 1;
}
#define TOKENS_ARE(t, ...) tokens_are(t, (const char *const[]){__VA_ARGS__, NULL})

static int ints_are(const int *a, const int *want, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != want[i]) return 0;
    return 1;
}

static void parse_tsv(const char *text, TsvCorpus *c) { tsv_parse(text, strlen(text), c); }

/* ---------------------------------------------------------------- tokenising */

static const char *sample_tsv =
    "Hello, World!\tBonjour le monde\n"    /* line 1: kept */
    "a b c d e f\tx\n"                     /* line 2: source 6 tokens: too long for 5 */
    "\xEF\xBB\xBF\tx\n"                    /* line 3: source only a stray BOM: empty */
    "\n"                                   /* line 4: blank, skipped by the TSV reader */
    "नमस्ते दुनिया।\tHello world\n"         /* line 5: kept (danda splits off) */
    "x\ty z w v u t\n"                     /* line 6: target 6 tokens: too long */
    "a b c d e\tONE two\n"                 /* line 7: exactly 5 tokens: kept */
    "y\t\xEF\xBB\xBF\xEF\xBB\xBF\n";       /* line 8: target empty */

static void test_tokenize(void)
{
    TsvCorpus tsv;
    parse_tsv(sample_tsv, &tsv);
    CHECK(tsv.n == 7 && tsv.n_blank == 1, "TSV fixture: 7 pairs, 1 blank line");
    TextOptions opt = {.lowercase = 1, .nfkc = 0};
    PairTokens p;
    corpus_tokenize(&tsv, &opt, 5, &p);
    CHECK(p.n == 3, "three pairs kept");
    CHECK(p.n_too_long == 2, "two dropped as too long (source side and target side)");
    CHECK(p.n_empty == 2, "two dropped as empty after normalising (source side and target side)");
    CHECK(p.n + p.n_too_long + p.n_empty == tsv.n, "every pair accounted for");
    CHECK(p.n == 3 && ints_are(p.line, (int[]){1, 5, 7}, 3), "file line numbers kept");
    CHECK(p.n == 3 && ints_are(p.index, (int[]){0, 3, 5}, 3), "TSV indices kept");
    CHECK(p.n == 3 && TOKENS_ARE(&p.src[0], "hello", ",", "world", "!"), "source tokens, lowercased");
    CHECK(p.n == 3 && TOKENS_ARE(&p.tgt[0], "bonjour", "le", "monde"), "target tokens");
    CHECK(p.n == 3 && TOKENS_ARE(&p.src[1], "नमस्ते", "दुनिया", "।"), "Devanagari tokens");
    CHECK(p.n == 3 && TOKENS_ARE(&p.tgt[2], "one", "two"), "pair on line 7");
    pair_tokens_free(&p);
    CHECK(p.n == 0 && p.src == NULL && p.index == NULL, "pair_tokens_free empties");

    /* max_len 0: no limit; the empty pairs are still dropped. */
    corpus_tokenize(&tsv, &opt, 0, &p);
    CHECK(p.n == 5 && p.n_too_long == 0 && p.n_empty == 2, "max_len 0 keeps long pairs");
    CHECK(p.n == 5 && ints_are(p.line, (int[]){1, 2, 5, 6, 7}, 5), "line numbers without a limit");
    pair_tokens_free(&p);

    /* No case folding. */
    opt.lowercase = 0;
    corpus_tokenize(&tsv, &opt, 5, &p);
    CHECK(p.n == 3 && TOKENS_ARE(&p.src[0], "Hello", ",", "World", "!"), "case kept without lowercase");
    pair_tokens_free(&p);
    tsv_free(&tsv);

    /* An empty corpus. */
    parse_tsv("", &tsv);
    corpus_tokenize(&tsv, &opt, 5, &p);
    CHECK(p.n == 0 && p.n_too_long == 0 && p.n_empty == 0, "empty corpus");
    pair_tokens_free(&p);
    tsv_free(&tsv);
}

/* ---------------------------------------------------------------- splitting */

/* train and valid together hold 0..n-1 exactly once. */
static int partition_ok(const int *train, int n_train, const int *valid, int n_valid, int n)
{
    if (n_train + n_valid != n) return 0;
    char *seen = calloc(n ? n : 1, 1);
    int ok = 1;
    for (int i = 0; i < n_train + n_valid && ok; i++) {
        int k = i < n_train ? train[i] : valid[i - n_train];
        ok = k >= 0 && k < n && !seen[k];
        if (ok) seen[k] = 1;
    }
    free(seen);
    return ok;
}

static void test_split(void)
{
    const int n = 1000;
    double fractions[] = {0, 0.1, 0.5};
    int want_valid[] = {0, 100, 500};
    char label[120];
    for (int f = 0; f < 3; f++) {
        int *train, *valid, n_train, n_valid, *train2, *valid2, n_train2, n_valid2, *train3, *valid3, n_train3,
            n_valid3;
        corpus_split(n, fractions[f], 42, &train, &n_train, &valid, &n_valid);
        corpus_split(n, fractions[f], 42, &train2, &n_train2, &valid2, &n_valid2);
        corpus_split(n, fractions[f], 43, &train3, &n_train3, &valid3, &n_valid3);
        snprintf(label, sizeof label, "fraction %.1f: %d valid, %d train", fractions[f], want_valid[f],
                 n - want_valid[f]);
        CHECK(n_valid == want_valid[f] && n_train == n - want_valid[f], label);
        snprintf(label, sizeof label, "fraction %.1f: disjoint and covering 0..n-1", fractions[f]);
        CHECK(partition_ok(train, n_train, valid, n_valid, n), label);
        snprintf(label, sizeof label, "fraction %.1f: same seed, same split and order", fractions[f]);
        CHECK(n_valid2 == n_valid && n_train2 == n_train && ints_are(train, train2, n_train) &&
              ints_are(valid, valid2, n_valid), label);
        snprintf(label, sizeof label, "fraction %.1f: another seed, another split", fractions[f]);
        CHECK(n_valid3 == n_valid && partition_ok(train3, n_train3, valid3, n_valid3, n) &&
              !ints_are(train, train3, n_train), label);
        if (n_valid) {
            snprintf(label, sizeof label, "fraction %.1f: another seed picks other validation pairs", fractions[f]);
            char *in_valid = calloc(n, 1);
            for (int i = 0; i < n_valid; i++) in_valid[valid[i]] = 1;
            int same = 0;
            for (int i = 0; i < n_valid3; i++) same += in_valid[valid3[i]];
            CHECK(same < n_valid, label);
            free(in_valid);
        }
        /* Shuffled, not 0..n-1 in order. */
        int in_order = 1;
        for (int i = 1; i < n_train; i++) in_order = in_order && train[i] == train[i - 1] + 1;
        snprintf(label, sizeof label, "fraction %.1f: training order is shuffled", fractions[f]);
        CHECK(!in_order, label);
        free(train), free(valid), free(train2), free(valid2), free(train3), free(valid3);
    }

    /* round(n * fraction), and tiny n. */
    int *train, *valid, n_train, n_valid;
    corpus_split(7, 0.5, 1, &train, &n_train, &valid, &n_valid);
    CHECK(n_valid == 4 && n_train == 3 && partition_ok(train, n_train, valid, n_valid, 7), "7 * 0.5 rounds to 4");
    free(train), free(valid);
    corpus_split(0, 0.1, 1, &train, &n_train, &valid, &n_valid);
    CHECK(n_valid == 0 && n_train == 0, "n = 0");
    free(train), free(valid);
}

/* ---------------------------------------------------------------- ids */

static void test_encode(void)
{
    TsvCorpus tsv;
    parse_tsv("the cat sat\tle chat\n"
              "the bird\tl' oiseau\n"   /* not counted: its words are <unk> unless seen elsewhere */
              "the dog\tle chien\n"
              "<unk> cat\tle chat\n",
              &tsv);
    TextOptions opt = {.lowercase = 1, .nfkc = 0};
    PairTokens p;
    corpus_tokenize(&tsv, &opt, 0, &p);
    CHECK(p.n == 4, "four pairs");

    VocabCounter *sc = vocab_counter_new(), *tc = vocab_counter_new();
    int train[] = {0, 2, 3};
    corpus_count(&p, train, 3, sc, tc);
    CHECK(vocab_counter_get(sc, "the") == 2 && vocab_counter_get(sc, "cat") == 2 && vocab_counter_get(sc, "bird") == 0,
          "source counts over the training indices only");
    CHECK(vocab_counter_get(tc, "le") == 3 && vocab_counter_get(tc, "oiseau") == 0, "target counts");
    corpus_count(&p, train, 1, sc, NULL); /* one side only */
    CHECK(vocab_counter_get(sc, "the") == 3 && vocab_counter_get(tc, "le") == 3, "a NULL counter is skipped");
    Vocab sv, tv;
    vocab_build(&sv, sc, 1, 0);
    vocab_build(&tv, tc, 1, 0);
    vocab_counter_free(sc);
    vocab_counter_free(tc);
    /* source: the 3, cat 3, sat 2, dog 1 (ties by bytes: cat < the) */
    CHECK(sv.size == 8 && vocab_lookup(&sv, "cat") == 4 && vocab_lookup(&sv, "the") == 5 &&
          vocab_lookup(&sv, "sat") == 6 && vocab_lookup(&sv, "dog") == 7, "source vocabulary ids");
    /* target: le 3, chat 2, chien 1 */
    CHECK(tv.size == 7 && vocab_lookup(&tv, "le") == 4 && vocab_lookup(&tv, "chat") == 5 &&
          vocab_lookup(&tv, "chien") == 6, "target vocabulary ids");

    Example *ex = corpus_encode(&p, NULL, p.n, &sv, &tv);
    CHECK(ex[0].src_len == 3 && ints_are(ex[0].src, (int[]){5, 4, 6}, 3), "the cat sat -> 5 4 6");
    CHECK(ex[0].tgt_len == 2 && ints_are(ex[0].tgt, (int[]){4, 5}, 2), "le chat -> 4 5");
    CHECK(ex[1].src_len == 2 && ints_are(ex[1].src, (int[]){5, VOCAB_UNK}, 2), "unseen 'bird' -> <unk>");
    CHECK(ex[1].tgt_len == 3 && ints_are(ex[1].tgt, (int[]){VOCAB_UNK, VOCAB_UNK, VOCAB_UNK}, 3),
          "unseen target words -> <unk>");
    CHECK(ex[3].src_len == 2 && ints_are(ex[3].src, (int[]){VOCAB_UNK, 4}, 2), "a literal <unk> in the text -> <unk>");
    examples_free(ex, p.n);

    /* With indices: the examples follow idx. */
    int idx[] = {2, 0};
    ex = corpus_encode(&p, idx, 2, &sv, &tv);
    CHECK(ex[0].src_len == 2 && ints_are(ex[0].src, (int[]){5, 7}, 2) && ex[1].src_len == 3, "encode follows idx");
    examples_free(ex, 2);
    int *ids = encode_tokens(&p.tgt[2], &tv);
    CHECK(ints_are(ids, (int[]){4, 6}, 2), "encode_tokens");
    free(ids);

    vocab_free(&sv);
    vocab_free(&tv);
    pair_tokens_free(&p);
    tsv_free(&tsv);
}

/* ---------------------------------------------------------------- batches */

static Example make_example(const int *src, int src_len, const int *tgt, int tgt_len)
{
    Example e = {malloc(sizeof(int) * (src_len ? src_len : 1)), malloc(sizeof(int) * (tgt_len ? tgt_len : 1)),
                 src_len, tgt_len};
    memcpy(e.src, src, sizeof(int) * src_len);
    memcpy(e.tgt, tgt, sizeof(int) * tgt_len);
    return e;
}

static int floats_are(const float *a, const float *want, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != want[i]) return 0;
    return 1;
}

enum { P = VOCAB_PAD, S_ = VOCAB_SOS, E_ = VOCAB_EOS };

static void test_batch_fill(void)
{
    Example ex[3] = {
        make_example((int[]){5, 6, 7}, 3, (int[]){8, 9}, 2),
        make_example((int[]){10}, 1, (int[]){11, 12, 13, 14}, 4),
        make_example((int[]){15, 16}, 2, (int[]){17}, 1),
    };
    Batch b = {0};
    int idx[] = {2, 0, 1}; /* column b holds ex[idx[b]] */
    batch_fill(&b, ex, idx, 3);
    CHECK(b.B == 3 && b.S == 3 && b.T == 5, "B 3, S = longest source 3, T = longest target + 1 = 5");
    /* (S, B), row t is time step t */
    CHECK(ints_are(b.src, (int[]){15, 5, 10,
                                  16, 6, P,
                                  P, 7, P}, 9), "src time-major, padded");
    CHECK(floats_are(b.mask, (float[]){1, 1, 1,
                                       1, 1, 0,
                                       0, 1, 0}, 9), "mask");
    /* (T, B) */
    CHECK(ints_are(b.tgt_in, (int[]){S_, S_, S_,
                                     17, 8, 11,
                                     P, 9, 12,
                                     P, P, 13,
                                     P, P, 14}, 15), "tgt_in: <sos> then the target, then padding");
    CHECK(ints_are(b.tgt_out, (int[]){17, 8, 11,
                                      E_, 9, 12,
                                      P, E_, 13,
                                      P, P, 14,
                                      P, P, E_}, 15), "tgt_out: the target then <eos>, then padding");
    CHECK(b.n_tokens == 10, "n_tokens counts targets plus one <eos> each");
    int non_pad = 0;
    for (int i = 0; i < b.T * b.B; i++) non_pad += b.tgt_out[i] != P;
    CHECK(non_pad == b.n_tokens, "n_tokens = non-pad entries of tgt_out");

    /* Reused for a smaller batch: the layout uses the new B, stale entries do not leak. */
    int one[] = {1};
    batch_fill(&b, ex, one, 1);
    CHECK(b.B == 1 && b.S == 1 && b.T == 5 && b.src[0] == 10 && b.mask[0] == 1 && b.n_tokens == 5, "refill, B = 1");
    CHECK(ints_are(b.tgt_in, (int[]){S_, 11, 12, 13, 14}, 5) && ints_are(b.tgt_out, (int[]){11, 12, 13, 14, E_}, 5),
          "refill targets");
    /* And for a larger one: it grows. */
    int many[] = {0, 1, 2, 0, 1, 2, 0, 1};
    batch_fill(&b, ex, many, 8);
    CHECK(b.B == 8 && b.S == 3 && b.T == 5 && b.cap >= 8 * 5, "grown for B = 8");
    CHECK(b.src[2 * 8 + 3] == 7 && b.mask[2 * 8 + 4] == 0 && b.tgt_out[4 * 8 + 7] == E_ && b.tgt_in[1 * 8 + 5] == 17,
          "B = 8 layout spot checks");
    batch_free(&b);
    CHECK(b.src == NULL && b.cap == 0, "batch_free empties");

    /* Source only, for translation. */
    int *srcs[] = {ex[0].src, ex[1].src, ex[2].src};
    int lens[] = {3, 1, 2};
    batch_fill_source(&b, srcs, lens, 3);
    CHECK(b.B == 3 && b.S == 3 && b.T == 0 && b.n_tokens == 0, "batch_fill_source: T = 0");
    CHECK(ints_are(b.src, (int[]){5, 10, 15,
                                  6, P, 16,
                                  7, P, P}, 9), "batch_fill_source: src");
    CHECK(floats_are(b.mask, (float[]){1, 1, 1,
                                       1, 0, 1,
                                       1, 0, 0}, 9), "batch_fill_source: mask");
    batch_free(&b);
    for (int i = 0; i < 3; i++) free(ex[i].src), free(ex[i].tgt);
}

/* Padded source positions when order[] is cut into batches of bs: sum of B*S - lengths. */
/* Padded target positions: what the decoder and output layer waste. */
static long target_padding(const int *order, const Example *ex, int n, int bs)
{
    long pad = 0;
    for (int start = 0; start < n; start += bs) {
        int m = n - start < bs ? n - start : bs, longest = 0;
        long real = 0;
        for (int i = 0; i < m; i++) {
            int len = ex[order[start + i]].tgt_len;
            if (len > longest) longest = len;
            real += len;
        }
        pad += (long)m * longest - real;
    }
    return pad;
}

static int is_permutation(const int *order, int n)
{
    char *seen = calloc(n ? n : 1, 1);
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        ok = order[i] >= 0 && order[i] < n && !seen[order[i]];
        if (ok) seen[order[i]] = 1;
    }
    free(seen);
    return ok;
}

static int sorted_by_length(const int *order, const Example *ex, int n)
{
    for (int i = 1; i < n; i++) {
        const Example *a = &ex[order[i - 1]], *b = &ex[order[i]];
        if (a->tgt_len > b->tgt_len || (a->tgt_len == b->tgt_len && a->src_len > b->src_len)) return 0;
    }
    return 1;
}

static void test_epoch_order(void)
{
    const int n = 3000, bs = 32;
    Example *ex = calloc(n, sizeof *ex);
    Rng rng;
    rng_seed(&rng, 5);
    for (int i = 0; i < n; i++) {
        ex[i].src_len = 1 + (int)rng_below(&rng, 40);
        ex[i].tgt_len = 1 + (int)rng_below(&rng, 40);
    }
    int *a = malloc(sizeof(int) * n), *b = malloc(sizeof(int) * n), *c = malloc(sizeof(int) * n),
        *shuffled = malloc(sizeof(int) * n);
    Rng r1, r2, r3;
    rng_seed(&r1, 11);
    rng_seed(&r2, 11);
    rng_seed(&r3, 12);
    batch_epoch_order(a, ex, n, bs, &r1);
    batch_epoch_order(b, ex, n, bs, &r2);
    batch_epoch_order(c, ex, n, bs, &r3);
    CHECK(is_permutation(a, n) && is_permutation(c, n), "epoch order is a permutation of 0..n-1");
    CHECK(ints_are(a, b, n), "same seed, same order");
    CHECK(!ints_are(a, c, n), "another seed, another order");
    /* The next epoch from the same generator differs too. */
    batch_epoch_order(b, ex, n, bs, &r2);
    CHECK(is_permutation(b, n) && !ints_are(a, b, n), "the next epoch is another order");

    /* Each batch is a run of similar lengths, sorted within; whole batches are shuffled. */
    int all_sorted = 1, rises = 0, falls = 0, prev_max = 0;
    for (int start = 0; start < n; start += bs) {
        int m = n - start < bs ? n - start : bs;
        all_sorted = all_sorted && sorted_by_length(a + start, ex, m);
        int mx = ex[a[start + m - 1]].tgt_len;
        if (start) {
            rises += mx > prev_max;
            falls += mx < prev_max;
        }
        prev_max = mx;
    }
    CHECK(all_sorted, "within every batch (and the partial last one) lengths are sorted");
    CHECK(rises > 10 && falls > 10, "batch lengths go up and down: batches are shuffled");

    /* train.bucket false: the plain shuffle. */
    rng_seed(&r1, 11);
    batch_shuffled_order(shuffled, n, &r1);
    CHECK(is_permutation(shuffled, n) && !ints_are(shuffled, a, n), "plain shuffle: another permutation");
    long pad_bucketed = target_padding(a, ex, n, bs), pad_shuffled = target_padding(shuffled, ex, n, bs);
    printf("  target padding over %d examples: %ld bucketed, %ld plain shuffle\n", n, pad_bucketed, pad_shuffled);
    CHECK(pad_bucketed * 5 < pad_shuffled, "bucketing cuts target padding at least fivefold");

    /* Fewer examples than one batch, and none. */
    batch_epoch_order(a, ex, 20, bs, &r1);
    CHECK(is_permutation(a, 20) && sorted_by_length(a, ex, 20), "n < batch size: a sorted permutation");
    /* None: nothing written (the sanitizer build would catch a read or write out of
     * bounds; the sentinel, a write within them). */
    a[0] = -7;
    batch_epoch_order(a, ex, 0, bs, &r1);
    CHECK(a[0] == -7, "n = 0: an empty order, nothing written");
    free(a), free(b), free(c), free(shuffled), free(ex);
}

static void test_sort_by_length(void)
{
    /* (src, tgt) lengths; equal pairs must keep their input order (stable). */
    int lens[][2] = {{3, 1}, {1, 5}, {3, 1}, {2, 2}, {1, 2}, {3, 0}, {2, 2}, {1, 5}};
    Example ex[8];
    for (int i = 0; i < 8; i++) ex[i] = (Example){NULL, NULL, lens[i][0], lens[i][1]};
    int order[] = {7, 6, 5, 4, 3, 2, 1, 0};
    sort_by_length(order, ex, 8);
    /* by (tgt, src): (3,0)=5, (3,1)=2,0 in input order, (1,2)=4, (2,2)=6,3, (1,5)=7,1 */
    CHECK(ints_are(order, (int[]){5, 2, 0, 4, 6, 3, 7, 1}, 8), "sorted by (target, source) length, stable");
    int sub[] = {1, 3, 0};
    sort_by_length(sub, ex, 3);
    CHECK(ints_are(sub, (int[]){0, 3, 1}, 3), "a subset of indices");
    int single[] = {2};
    sort_by_length(single, ex, 1);
    CHECK(single[0] == 2, "one element");
}

/* corpus_segment: the length filter saw words; the pairs then hold the model's units,
 * which segmenter_join turns back into the words. */
static void test_segment(void)
{
    TsvCorpus tsv;
    parse_tsv(sample_tsv, &tsv);
    TextOptions opt = {.lowercase = 1, .nfkc = 0};
    PairTokens words, pieces;
    corpus_tokenize(&tsv, &opt, 5, &words);
    corpus_tokenize(&tsv, &opt, 5, &pieces);
    Segmenter word = {.kind = TOKENIZER_WORD}, chars = {.kind = TOKENIZER_CHAR};
    corpus_segment(&pieces, &word);
    int same = pieces.n == words.n;
    for (int i = 0; same && i < words.n; i++)
        same = pieces.src[i].n == words.src[i].n && pieces.tgt[i].n == words.tgt[i].n;
    CHECK(same, "word: segmenting changes nothing");
    corpus_segment(&pieces, &chars);
    /* Pair 1 is line 5: "नमस्ते दुनिया ।" -> न@@ म@@ स्@@ ते द@@ ु... by grapheme clusters. */
    CHECK(pieces.n == 3 && pieces.src[1].n > words.src[1].n && !strcmp(pieces.src[1].tokens[0], "न@@"),
          "char: the source of line 5 in characters, continuing ones marked @@");
    int back = 1;
    for (int i = 0; i < pieces.n; i++) {
        TokenList s, t;
        segmenter_join(&chars, pieces.src[i].tokens, pieces.src[i].n, &s);
        segmenter_join(&chars, pieces.tgt[i].tokens, pieces.tgt[i].n, &t);
        back = back && s.n == words.src[i].n && t.n == words.tgt[i].n;
        for (int j = 0; back && j < s.n; j++)
            back = !strcmp(s.tokens[j], words.src[i].tokens[j]);
        for (int j = 0; back && j < t.n; j++)
            back = !strcmp(t.tokens[j], words.tgt[i].tokens[j]);
        token_list_free(&s);
        token_list_free(&t);
    }
    CHECK(back, "char: joining every pair's units gives its words back");
    pair_tokens_free(&words);
    pair_tokens_free(&pieces);
    tsv_free(&tsv);
}

int main(void)
{
    test_tokenize();
    test_segment();
    test_split();
    test_encode();
    test_batch_fill();
    test_epoch_order();
    test_sort_by_length();
    return check_report("test_corpus");
}
