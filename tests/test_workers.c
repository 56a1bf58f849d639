/* test_workers.c — decode/workers.h: borrowing (distinct workers; a borrow waits for a
 * return), and the worker calls' promise that a batch translates to the same bits on
 * any worker and under any number of them at once: translations (greedy, beam with
 * n-best, attention matrices, an ensemble; recurrent and Transformer) and classifier
 * labels with several workers equal one worker's, to the bit.
 *
 * The models are small and random (made here, nothing read from disk); their words are
 * nonsense, which does not matter to a comparison of bits. The waits are on conditions
 * (a join), never on a clock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decode/classify.h"  /* defines: worker_classify */
#include "decode/translate.h" /* defines: worker_translate, workers_translate_lines, Translation */
#include "decode/workers.h"   /* defines: Workers, workers_* */
#include "layers/pooling.h"   /* defines: POOL_ATTENTION */
#include "models/classifier.h"

/* ---------------------------------------------------------------- borrowing */

typedef struct {
    Workers *w;
    Worker *got;
} Borrower;

static void *borrow_thread(void *arg)
{
    Borrower *b = arg;
    b->got = workers_borrow(b->w);
    return NULL;
}

static void test_borrow(void)
{
    Error err;
    Workers *w = workers_new(NULL, 0, 3, &err);
    CHECK(w && workers_count(w) == 3 && workers_threads(w) != NULL, "workers_new: 3 workers, with threads");
    Worker *k[3];
    for (int i = 0; i < 3; i++)
        k[i] = workers_borrow(w);
    CHECK(k[0] != k[1] && k[1] != k[2] && k[0] != k[2], "workers_borrow: three distinct workers");
    /* All three out: a fourth borrow waits until one comes back. */
    Borrower b = {w, NULL};
    pthread_t t;
    pthread_create(&t, NULL, borrow_thread, &b);
    workers_return(w, k[1]);
    pthread_join(t, NULL);
    CHECK(b.got == k[1], "workers_borrow with none free: waits, and gets the one returned");
    workers_return(w, k[0]);
    workers_return(w, k[2]);
    workers_return(w, b.got);
    workers_free(w);
    Workers *one = workers_new(NULL, 0, 1, &err);
    CHECK(one && workers_count(one) == 1 && workers_threads(one) == NULL, "one worker: no thread (the caller's)");
    workers_free(one);
}

/* ---------------------------------------------------------------- models */

static const char *words[] = {"<pad>", "<unk>", "<sos>", "<eos>", "a", "b", "c", "d", "e", "f", "g", "h", "i",
                              "j", "k", "l", "m", "n", "o", "p"};
#define N_WORDS (int)(sizeof words / sizeof words[0])

static void make_model(ModelFile *mf, const ModelDims *dims, uint64_t seed)
{
    memset(mf, 0, sizeof *mf);
    Error err;
    if (vocab_from_words(&mf->src_vocab, (char *const *)words, N_WORDS, &err) ||
        vocab_from_words(&mf->tgt_vocab, (char *const *)words, N_WORDS, &err)) {
        fprintf(stderr, "vocab_from_words: %s\n", err.msg);
        exit(2);
    }
    ModelDims d = *dims;
    d.src_vocab = d.tgt_vocab = N_WORDS;
    model_alloc(&mf->model, &d);
    model_init_weights(&mf->model, seed);
    /* Larger weights than the initialisation's: sharper distributions, fewer ties. */
    for (long i = 0; i < mf->model.n_params; i++)
        mf->model.param_mem[i] *= 3.0f;
}

/* n lines of 1 .. 12 random words, some empty, one not UTF-8. */
static char **make_lines(int n)
{
    char **lines = xmalloc(sizeof(char *) * n);
    Rng rng;
    rng_seed(&rng, 5);
    for (int i = 0; i < n; i++) {
        char buf[64] = "";
        int len = (int)rng_below(&rng, 13);
        for (int j = 0; j < len; j++) {
            strcat(buf, j ? " " : "");
            strcat(buf, words[4 + rng_below(&rng, N_WORDS - 4)]);
        }
        lines[i] = xstrdup(i == 7 ? "\xff\xfe" : buf);
    }
    return lines;
}

/* ---------------------------------------------------------------- translations */

#define LINES 150
#define BATCH 8

typedef struct {
    Workers *w;
    char **lines;
    const TranslateOptions *opt;
    Translation *out;   /* (LINES * k) */
    int *count, *bad;
} Job;

static void translate_batch_on_a_worker(void *ctx, int b)
{
    Job *j = ctx;
    int k = j->opt->nbest > 1 ? j->opt->nbest : 1, start = b * BATCH;
    int n = LINES - start < BATCH ? LINES - start : BATCH;
    Worker *wk = workers_borrow(j->w);
    worker_translate(wk, j->lines + start, n, j->opt, j->out + (long)start * k, j->count + start, j->bad + start);
    workers_return(j->w, wk);
}

static Translation *translate_all(Workers *w, char **lines, const TranslateOptions *opt, int **count, int **bad)
{
    int k = opt->nbest > 1 ? opt->nbest : 1;
    Job j = {w, lines, opt, xcalloc((long)LINES * k, sizeof(Translation)), xcalloc(LINES, sizeof(int)),
             xcalloc(LINES, sizeof(int))};
    threadpool_for(workers_threads(w), (LINES + BATCH - 1) / BATCH, translate_batch_on_a_worker, &j);
    *count = j.count;
    *bad = j.bad;
    return j.out;
}

static int same_translation(const Translation *a, const Translation *b)
{
    if (strcmp(a->text, b->text) || memcmp(&a->score, &b->score, sizeof a->score) ||
        memcmp(&a->logprob, &b->logprob, sizeof a->logprob) || a->n_out != b->n_out || a->n_src != b->n_src ||
        a->finished != b->finished || (a->attn == NULL) != (b->attn == NULL))
        return 0;
    for (int i = 0; i < a->n_out; i++)
        if (strcmp(a->out_tokens[i], b->out_tokens[i])) return 0;
    return !a->attn || !memcmp(a->attn, b->attn, sizeof(float) * a->n_out * a->n_src);
}

/* The same translations with 1 and with 3 workers (ModelFile models[n_models]). */
static void compare_workers(ModelFile **models, int n_models, const TranslateOptions *opt, const char *what)
{
    char **lines = make_lines(LINES);
    int k = opt->nbest > 1 ? opt->nbest : 1, *count1, *bad1, *count3, *bad3;
    Error err;
    Workers *one = workers_new(models, n_models, 1, &err), *three = workers_new(models, n_models, 3, &err);
    Translation *a = translate_all(one, lines, opt, &count1, &bad1);
    Translation *b = translate_all(three, lines, opt, &count3, &bad3);
    int same = 1, words_out = 0, with_attn = 0;
    for (int i = 0; i < LINES; i++) {
        same &= count1[i] == count3[i] && bad1[i] == bad3[i];
        for (int j = 0; j < count1[i] && same; j++) {
            same &= same_translation(&a[(long)i * k + j], &b[(long)i * k + j]);
            words_out += a[(long)i * k + j].text[0] != 0;
            with_attn += a[(long)i * k + j].attn != NULL;
        }
    }
    char line[160];
    snprintf(line, sizeof line, "%s: 3 workers give 1 worker's translations, scores%s, bit for bit (%d non-empty)",
             what, opt->attention ? " and attention" : "", words_out);
    CHECK(same && words_out > LINES / 2 && bad1[7] == 1 && (!opt->attention || with_attn > 0), line);
    for (long i = 0; i < (long)LINES * k; i++) {
        translation_free(&a[i]);
        translation_free(&b[i]);
    }
    /* The text-only view over the workers agrees too. */
    char **t1 = xmalloc(sizeof(char *) * LINES), **t3 = xmalloc(sizeof(char *) * LINES);
    workers_translate_lines(one, lines, LINES, BATCH, opt, t1, NULL);
    workers_translate_lines(three, lines, LINES, BATCH, opt, t3, NULL);
    int same_text = 1;
    for (int i = 0; i < LINES; i++) {
        same_text &= !strcmp(t1[i], t3[i]);
        free(t1[i]);
        free(t3[i]);
    }
    snprintf(line, sizeof line, "%s: workers_translate_lines, 1 and 3 workers: the same sentences", what);
    CHECK(same_text, line);
    for (int i = 0; i < LINES; i++)
        free(lines[i]);
    free(lines);
    free(t1);
    free(t3);
    free(a);
    free(b);
    free(count1);
    free(count3);
    free(bad1);
    free(bad3);
    workers_free(one);
    workers_free(three);
}

static void test_translate(void)
{
    ModelFile gru, gru2, tr;
    ModelDims rnn = {.embed = 8, .hidden = 12};
    ModelDims trd = {.type = MODEL_TRANSFORMER, .embed = 8, .hidden = 8, .heads = 2, .ff = 16, .layers = 2,
                     .enc_layers = 2, .dec_layers = 2};
    make_model(&gru, &rnn, 1);
    make_model(&gru2, &rnn, 2);
    make_model(&tr, &trd, 3);
    ModelFile *g[2] = {&gru, &gru2}, *t[1] = {&tr};
    TranslateOptions greedy = {.max_len = 12};
    TranslateOptions beam = {.max_len = 12, .beam = 3, .nbest = 2, .length_penalty = 0.6f, .attention = 1};
    compare_workers(g, 1, &greedy, "recurrent, greedy");
    compare_workers(g, 1, &beam, "recurrent, beam 3, 2-best, attention");
    compare_workers(t, 1, &greedy, "Transformer, greedy");
    TranslateOptions heads = beam;
    heads.attention_heads = 1;
    compare_workers(t, 1, &heads, "Transformer, beam 3, 2-best, attention");
    TranslateOptions ens = beam;
    ens.ensemble = 1;
    compare_workers(g, 2, &ens, "an ensemble of two recurrent models, beam");
    /* opt.model picks a model: model 1 alone is not model 0. */
    Error err;
    Workers *w = workers_new(g, 2, 1, &err);
    char *line = "a b c d", *out0, *out1;
    TranslateOptions pick = greedy;
    Worker *k = workers_borrow(w);
    worker_translate_lines(k, &line, 1, &pick, &out0, NULL);
    pick.model = 1;
    worker_translate_lines(k, &line, 1, &pick, &out1, NULL);
    workers_return(w, k);
    CHECK(strcmp(out0, out1) != 0, "TranslateOptions.model: model 1 translates, not model 0");
    free(out0);
    free(out1);
    workers_free(w);
    modelfile_free(&gru);
    modelfile_free(&gru2);
    modelfile_free(&tr);
}

/* ---------------------------------------------------------------- classifying */

typedef struct {
    Workers *w;
    char **lines;
    int *classes;
    float *probs;
    int C;
} ClassJob;

static void classify_on_a_worker(void *ctx, int b)
{
    ClassJob *j = ctx;
    int start = b * BATCH, n = LINES - start < BATCH ? LINES - start : BATCH;
    Worker *k = workers_borrow(j->w);
    worker_classify(k, 0, j->lines + start, n, j->classes + start, j->probs + (long)start * j->C, NULL, NULL, NULL);
    workers_return(j->w, k);
}

static void test_classify(void)
{
    ModelFile mf;
    ModelDims d = {.type = MODEL_CLASSIFIER, .embed = 8, .hidden = 12, .pooling = POOL_ATTENTION};
    make_model(&mf, &d, 4);
    ModelFile *models[1] = {&mf};
    char **lines = make_lines(LINES);
    int C = model_classes(&mf.model.dims), same = 1;
    ClassJob j[2];
    for (int r = 0; r < 2; r++) {
        Error err;
        j[r] = (ClassJob){workers_new(models, 1, r ? 3 : 1, &err), lines, xmalloc(sizeof(int) * LINES),
                          xmalloc(sizeof(float) * LINES * C), C};
        threadpool_for(workers_threads(j[r].w), (LINES + BATCH - 1) / BATCH, classify_on_a_worker, &j[r]);
    }
    /* A line without a label (empty, not UTF-8) has no probabilities to compare. */
    int labelled = 0;
    same = !memcmp(j[0].classes, j[1].classes, sizeof(int) * LINES);
    for (int i = 0; i < LINES; i++)
        if (j[0].classes[i] >= 0) {
            same &= !memcmp(j[0].probs + (long)i * C, j[1].probs + (long)i * C, sizeof(float) * C);
            labelled++;
        }
    CHECK(same && j[0].classes[7] == -1 && labelled > LINES / 2, "classifier: 3 workers give 1 worker's labels and probabilities, bit for bit");
    for (int r = 0; r < 2; r++) {
        workers_free(j[r].w);
        free(j[r].classes);
        free(j[r].probs);
    }
    for (int i = 0; i < LINES; i++)
        free(lines[i]);
    free(lines);
    modelfile_free(&mf);
}

int main(void)
{
    test_borrow();
    test_translate();
    test_classify();
    return check_report("test_workers");
}
