#include "train/dataset.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/corpus.h"     /* defines: PairTokens, corpus_* */
#include "io/outfile.h"    /* defines: OutFile, outfile_open, outfile_commit */
#include "text/segment.h"    /* defines: Segmenter, tokenizer_kind, segmenter_learn_bpe */
#include "files/trainstate.h" /* defines: examples_fingerprint */
#include "data/tsv.h"        /* defines: TsvCorpus, tsv_read_pairs */

/* ---------------------------------------------------------------- growing vocabularies */

/* The share of the units counted in c that v maps to <unk>. */
static double unk_share(const VocabCounter *c, const Vocab *v)
{
    int n = vocab_counter_size(c);
    char **words = xmalloc(sizeof(char *) * (n ? n : 1));
    long *counts = xmalloc(sizeof(long) * (n ? n : 1)), unk = 0, all = 0;
    vocab_counter_items(c, words, counts);
    for (int i = 0; i < n; i++) {
        unk += vocab_lookup(v, words[i]) == VOCAB_UNK ? counts[i] : 0;
        all += counts[i];
    }
    free(words);
    free(counts);
    return all ? (double)unk / (double)all : 0.0;
}

/* train.extend_vocab: the model's vocabularies (mf's, from train.init_from) grown by the
 * training split idx[0..n) of pairs (segmented) as vocab_extend grows them, under
 * data.min_count and data.max_vocab; data.joint_vocab's one vocabulary from both sides
 * counted together, as it was built; a classifier's source side only. */
static void extend_vocabularies(Dataset *ds, ModelFile *mf, const Config *cfg, const PairTokens *pairs,
                                const int *idx, int n, int classifier)
{
    VocabCounter *sc = vocab_counter_new(), *tc = classifier ? NULL : cfg->joint_vocab ? sc : vocab_counter_new();
    VocabCounter *labels = classifier ? vocab_counter_new() : NULL;
    corpus_count(pairs, idx, n, sc, classifier ? labels : tc);
    ds->unk_before[0] = unk_share(sc, &mf->src_vocab);
    ds->vocab_added[0] = vocab_extend(&mf->src_vocab, sc, cfg->min_count, cfg->max_vocab);
    if (tc) {
        ds->unk_before[1] = unk_share(tc, &mf->tgt_vocab);
        ds->vocab_added[1] = vocab_extend(&mf->tgt_vocab, tc, cfg->min_count, cfg->max_vocab);
    }
    if (tc && tc != sc) vocab_counter_free(tc);
    vocab_counter_free(sc);
    vocab_counter_free(labels);
}

/* ---------------------------------------------------------------- preparing */

LineLimit dataset_line_limit(const Config *cfg)
{
    return (LineLimit){cfg->max_line_bytes, "data.max_line_bytes"};
}

/* The lines of path the reader skipped, said once. */
static void warn_skipped(const TsvCorpus *tsv, const char *path, Console *con)
{
    char note[ERROR_LEN];
    tsv_describe_skipped(tsv, path, note, sizeof note);
    if (note[0]) console_warn(con, "%s", note);
}

static int read_pairs(const Config *cfg, const ModelFile *mf, const char *path, TsvCorpus *tsv, PairTokens *out,
                      Console *con, Error *err)
{
    LineLimit limit = dataset_line_limit(cfg);
    if (tsv_read_pairs(path, &limit, tsv, err)) return -1;
    warn_skipped(tsv, path, con);
    corpus_tokenize(tsv, &mf->text, cfg->max_len, out);
    if (out->n_too_long || out->n_empty)
        console_say(con, "%s: dropped %d pairs longer than %d tokens and %d with an empty side", path,
                    out->n_too_long, cfg->max_len, out->n_empty);
    if (out->n == 0) {
        error_set(err, "%s: no usable sentence pairs (%d read)", path, tsv->n);
        tsv_free(tsv);
        pair_tokens_free(out);
        return -1;
    }
    return 0;
}

/* The held-out lines idx[0..n-1] of `pairs`, source (or text) in column `first` and
 * target (or label) in column `second`, any other column up to the last empty: written
 * so that the model reads them back as it read the file. Sentence pairs are columns 1
 * and 2, as they were in the file. */
static int write_valid(Dataset *ds, const char *path, const TsvCorpus *tsv, const PairTokens *pairs, const int *idx,
                       int n, int first, int second, Error *err)
{
    int columns = first > second ? first : second;
    OutFile *o = &ds->valid_out;
    if (outfile_open(o, path, err)) return -1;
    ds->valid_pending = 1;  /* in place once the run is sure to start: dataset_commit_valid */
    for (int i = 0; i < n; i++) {
        const TsvPair *p = &tsv->pairs[pairs->index[idx[i]]];
        for (int c = 1; c <= columns; c++)
            fprintf(o->f, "%s%s", c == first ? p->src : c == second ? p->tgt : "", c < columns ? "\t" : "\n");
    }
    return 0;
}

int dataset_commit_valid(Dataset *ds, Error *err)
{
    if (!ds->valid_pending) return 0;
    ds->valid_pending = 0;
    return outfile_commit(&ds->valid_out, err);
}

/* The validation pairs scored by BLEU: all of them, or train.valid_bleu_max spread
 * evenly over the set (a validation file may be sorted by length, so not its first
 * lines). Validation example i came from pair idx[i] of `pairs` (i itself when idx is
 * NULL). Kept as text, as written, so that BLEU is computed exactly as `nmt eval`
 * computes it on the same pairs; sorted by length, so that sentences decoded together
 * end at similar steps. */
static void keep_bleu_pairs(Dataset *ds, const Config *cfg, const ModelFile *mf, const TsvCorpus *tsv,
                            const PairTokens *pairs, const int *idx)
{
    int n = cfg->valid_bleu_max < ds->n_valid ? cfg->valid_bleu_max : ds->n_valid;
    ds->n_bleu = n;
    if (n == 0) return;
    int *pick = xmalloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        pick[i] = (int)((long)i * ds->n_valid / n);
    sort_by_length(pick, ds->valid, n);
    ds->bleu_src = xmalloc(sizeof(char *) * n);
    ds->bleu_ref = xmalloc(sizeof(char *) * n);
    for (int i = 0; i < n; i++) {
        const TsvPair *p = &tsv->pairs[pairs->index[idx ? idx[pick[i]] : pick[i]]];
        ds->bleu_src[i] = xstrdup(p->src);
        ds->bleu_ref[i] = segmenter_reference(&mf->seg, p->tgt);
    }
    free(pick);
    ds->bleu_metric.tokenize = bleu_tokenize_guess(ds->bleu_ref, n);
    ds->bleu_metric.lowercase = mf->text.lowercase;
}

/* data.spm_model's file as both sides' SentencePiece model. */
static int read_spm_model(Segmenter *s, const char *path, Console *con, Error *err)
{
    unsigned char *data;
    size_t len;
    char name[ERROR_LEN / 2];
    snprintf(name, sizeof name, "%s (data.spm_model)", path);
    if (read_whole_file(path, &data, &len, err)) return -1;
    int status = segmenter_load_spm(&s->spm_src, data, len, name, err) ||
                 segmenter_load_spm(&s->spm_tgt, data, len, name, err) ? -1 : 0;
    free(data);
    if (status == 0)
        console_say(con, "SentencePiece %s model of %d pieces from %s, for both sides", segmenter_spm_type(&s->spm_src),
                    spm_piece_count(s->spm_src.spm), path);
    return status;
}

/* Each pair's side(s) as a line, its words joined by single spaces (malloc'd; *count lines):
 * what SentencePiece trains on. */
static char **side_lines(const PairTokens *pairs, const int *idx, int n, int source, int target, long *count)
{
    char **lines = xmalloc(sizeof(char *) * (size_t)(2 * n + 1));
    *count = 0;
    for (int i = 0; i < n; i++) {
        int k = idx ? idx[i] : i;
        const TokenList *sides[2] = {source ? &pairs->src[k] : NULL, target ? &pairs->tgt[k] : NULL};
        for (int j = 0; j < 2; j++) {
            if (sides[j]) lines[(*count)++] = text_join(sides[j]->tokens, sides[j]->n);
        }
    }
    return lines;
}

static void free_lines(char **lines, long n)
{
    for (long i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

/* SentencePiece models trained on the training split (data.tokenizer "spm"), per side
 * or, with data.joint_vocab, one on both sides (the same model for both); or
 * data.spm_model's. One thread, so a resumed run trains the same ones again. */
static int learn_spm(Segmenter *s, const Config *cfg, const PairTokens *pairs, const int *idx, int n, Console *con,
                     Error *err)
{
    if (cfg->spm_model) return read_spm_model(s, cfg->spm_model, con, err);
    double t0 = now_seconds();
    int status = 0;
    char context[ERROR_LEN];
    long count;
    if (s->joint) {
        char **lines = side_lines(pairs, idx, n, 1, 1, &count);
        status = segmenter_learn_spm(&s->spm_src, (const char *const *)lines, count, cfg->spm_type,
                                     cfg->spm_vocab_size, s->symbols, err);
        if (status == 0)
            status = segmenter_load_spm(&s->spm_tgt, s->spm_src.proto, s->spm_src.n, "the trained model", err);
        free_lines(lines, count);
    } else {
        SpmModel *models[2] = {&s->spm_src, &s->spm_tgt};
        for (int side = 0; side < 2 && status == 0; side++) {
            char **lines = side_lines(pairs, idx, n, side == 0, side == 1, &count);
            status = segmenter_learn_spm(models[side], (const char *const *)lines, count, cfg->spm_type,
                                         cfg->spm_vocab_size, s->symbols, err);
            free_lines(lines, count);
        }
    }
    if (status) {
        snprintf(context, sizeof context, "%s", err->msg);
        return error_set(err, "%s: data.tokenizer spm, data.spm_vocab_size %d: %s", cfg->train, cfg->spm_vocab_size,
                         context);
    }
    if (s->joint)
        console_say(con, "trained a SentencePiece %s model of %d pieces on both sides (%.1f s)", cfg->spm_type,
                    spm_piece_count(s->spm_src.spm), now_seconds() - t0);
    else
        console_say(con, "trained SentencePiece %s models of %d source and %d target pieces (%.1f s)", cfg->spm_type,
                    spm_piece_count(s->spm_src.spm), spm_piece_count(s->spm_tgt.spm), now_seconds() - t0);
    return 0;
}

/* The segmenter data.tokenizer asks for. Under "bpe", merges learned from the training
 * split's word counts, per side or, with data.joint_vocab, from both sides together
 * (the same list for both); under "spm", learn_spm's models. Deterministic, so a
 * resumed run learns the same again. 0, or -1 with err. */
static int learn_segmenter(Segmenter *s, const Config *cfg, const PairTokens *pairs, const int *idx, int n,
                           Console *con, Error *err)
{
    s->kind = (TokenizerKind)tokenizer_kind(cfg->tokenizer);  /* the config has checked the names */
    s->joint = cfg->joint_vocab;
    if (s->kind == TOKENIZER_NONE) s->format = subword_format(cfg->subword_format);
    if (s->kind == TOKENIZER_SPM) return learn_spm(s, cfg, pairs, idx, n, con, err);
    if (s->kind != TOKENIZER_BPE) return 0;
    double t0 = now_seconds();
    VocabCounter *sc = vocab_counter_new(), *tc = s->joint ? sc : vocab_counter_new();
    corpus_count(pairs, idx, n, sc, tc);
    long too_long = segmenter_learn_bpe(&s->src, sc, cfg->bpe_merges, BPE_NMT, s->symbols);
    long too_long_tgt = segmenter_learn_bpe(&s->tgt, tc, cfg->bpe_merges, BPE_NMT, s->symbols);
    if (!s->joint) too_long += too_long_tgt;   /* joint: both learned from one count */
    if (too_long)
        console_warn(con, "%s: %ld word%s longer than %d bytes left out of learning the BPE merges", cfg->train,
                     too_long, too_long == 1 ? "" : "s", BPE_MAX_WORD_BYTES);
    if (tc != sc) vocab_counter_free(tc);
    vocab_counter_free(sc);
    if (s->joint)
        console_say(con, "learned %d BPE merges from both sides (%.1f s)", s->src.n, now_seconds() - t0);
    else
        console_say(con, "learned %d source and %d target BPE merges (%.1f s)", s->src.n, s->tgt.n,
                    now_seconds() - t0);
    return 0;
}

/* A vocabulary of the special tokens alone makes a model that can say nothing: every
 * word of its side is <unk>. Refused before training, with both sizes and the key that
 * emptied it: data.min_count above every unit's count (data.max_vocab below 5 is the
 * config's to refuse). counts[k] is side k's counter (k 0 source, 1 target; a
 * classifier has no target vocabulary to build: counts[1] NULL). */
static int check_vocab_words(const Config *cfg, const ModelFile *mf, VocabCounter *const counts[2], Error *err)
{
    const Vocab *v[2] = {&mf->src_vocab, &mf->tgt_vocab};
    const char *side[2] = {"source", "target"}, *units = tokenizer_units(mf->seg.kind);
    for (int k = 0; k < 2; k++) {
        if (!counts[k] || v[k]->size > VOCAB_SPECIALS) continue;
        long top_count;
        const char *top = vocab_counter_top(counts[k], &top_count);
        char sizes[96], why[300];
        if (counts[1]) snprintf(sizes, sizeof sizes, "vocabularies of %d source and %d target entries", v[0]->size,
                                v[1]->size);
        else snprintf(sizes, sizeof sizes, "a vocabulary of %d entries", v[0]->size);
        if (!top) snprintf(why, sizeof why, "the training split has no %s %s", side[k], units);
        else if (top_count < cfg->min_count)
            snprintf(why, sizeof why, "data.min_count %d keeps no %s %s: the most frequent, \"%.40s\", occurs %ld "
                                      "time%s in the training split (lower data.min_count)", cfg->min_count, side[k],
                     units, top, top_count, top_count == 1 ? "" : "s");
        else snprintf(why, sizeof why, "data.max_vocab %d leaves no room after them", cfg->max_vocab);
        return error_set(err, "%s: the %s vocabulary would hold only the %d special tokens (<pad>, <unk>, <sos>, "
                              "<eos>), a model that can say nothing (%s): %s", cfg->train, side[k], VOCAB_SPECIALS,
                         sizes, why);
    }
    return 0;
}

/* ---------------------------------------------------------------- a classifier's */

/* A labelled file (tsv_read_labelled) tokenised: PairTokens whose tgt is the label,
 * which stays as written (tsv->pairs[out->index[i]].tgt); no length limit. */
static int read_labelled(const Config *cfg, const ModelFile *mf, const char *path, TsvCorpus *tsv, PairTokens *out,
                         Console *con, Error *err)
{
    LineLimit limit = dataset_line_limit(cfg);
    if (tsv_read_labelled(path, cfg->text_column, cfg->label_column, &limit, tsv, err)) return -1;
    warn_skipped(tsv, path, con);
    corpus_tokenize(tsv, &mf->text, 0, out);
    if (out->n_empty) console_say(con, "%s: dropped %d lines whose text has no tokens", path, out->n_empty);
    if (out->n == 0) {
        error_set(err, "%s: no usable labelled lines (%d read)", path, tsv->n);
        tsv_free(tsv);
        pair_tokens_free(out);
        return -1;
    }
    return 0;
}

/* The examples idx[0..n-1] of pairs (all when idx is NULL), each with its label's class
 * and no target; those whose label is not in the set are left out and counted in
 * *unseen (the first one's line and label in first_line, first_label). */
static Example *encode_labelled(const TsvCorpus *tsv, const PairTokens *pairs, const int *idx, int n,
                                const ModelFile *mf, int *kept, int *unseen, int *first_line, const char **first_label)
{
    Example *ex = corpus_encode(pairs, idx, n, &mf->src_vocab, &mf->tgt_vocab);
    *kept = *unseen = 0;
    for (int i = 0; i < n; i++) {
        const TsvPair *p = &tsv->pairs[pairs->index[idx ? idx[i] : i]];
        int c = vocab_label_class(&mf->tgt_vocab, p->tgt);
        free(ex[i].tgt);
        if (c < 0) {
            if ((*unseen)++ == 0) {
                *first_line = p->line;
                *first_label = p->tgt;
            }
            free(ex[i].src);
            continue;
        }
        ex[*kept] = (Example){.src = ex[i].src, .src_len = ex[i].src_len, .label = c};
        (*kept)++;
    }
    return ex;
}

/* The column valid.tsv holds a classifier's labels in: data.label_column, or (0: the
 * last column) the one after the text, which is the last of the lines write_valid
 * writes. */
static int label_column(const Config *cfg)
{
    return cfg->label_column ? cfg->label_column : cfg->text_column > 1 ? cfg->text_column + 1 : 2;
}

/* A label column of nearly unique values (an id column, or the text when the columns
 * are swapped) makes a classifier of about as many classes as lines, which can learn
 * nothing, and whose eval tables grow with the square of the classes: refused when more
 * than half of the n training lines have a label no other training line has. 0, or -1
 * with err naming data.train, the counts and a label. */
static int check_label_spread(const Vocab *labels, char **train_labels, int n, const Config *cfg, Error *err)
{
    int classes = labels->size - VOCAB_SPECIALS, alone = 0, example = 0;
    int *count = xcalloc(classes, sizeof(int));
    for (int i = 0; i < n; i++) {
        int c = vocab_label_class(labels, train_labels[i]);
        if (c >= 0) count[c]++;
    }
    for (int c = classes - 1; c >= 0; c--)
        if (count[c] == 1) {
            alone++;
            example = c;
        }
    free(count);
    if (2 * alone <= n) return 0;
    char column[64];
    if (cfg->label_column) snprintf(column, sizeof column, "column %d, data.label_column", cfg->label_column);
    else snprintf(column, sizeof column, "the last column");
    return error_set(err, "%s: %d of the %d training lines have a label no other line has (%d labels in all, such as "
                          "\"%.40s\"): the label column (%s) holds ids or text rather than labels, from which a "
                          "classifier learns nothing; check data.label_column and data.text_column", cfg->train, alone,
                     n, classes, vocab_class_label(labels, example), column);
}

/* dataset_prepare for model.type classifier: the same split and segmenter, the source
 * vocabulary from the training texts, the label set from the training labels (in
 * byte order). Training labels must make at least two classes; validation lines whose
 * label training never saw are left out with a warning. */
static int prepare_classifier(Dataset *ds, ModelFile *mf, const Config *cfg, const char *valid_tsv, Console *con,
                              Error *err)
{
    PairTokens pairs, valid_pairs = {0};
    TsvCorpus tsv, valid_tsv_pairs = {0};
    if (read_labelled(cfg, mf, cfg->train, &tsv, &pairs, con, err)) return -1;
    int *train_idx, *valid_idx, n_train, n_valid, status = 0;
    if (cfg->valid && read_labelled(cfg, mf, cfg->valid, &valid_tsv_pairs, &valid_pairs, con, err)) {
        pair_tokens_free(&pairs);
        tsv_free(&tsv);
        return -1;
    }
    corpus_split(pairs.n, cfg->valid ? 0.0 : cfg->valid_fraction, (uint64_t)cfg->seed, &train_idx, &n_train,
                 &valid_idx, &n_valid);
    if (n_train == 0)
        status = error_set(err, "%s: no lines left for training after the validation split", cfg->train);
    else if (!cfg->valid && valid_tsv)
        status = write_valid(ds, valid_tsv, &tsv, &pairs, valid_idx, n_valid, cfg->text_column, label_column(cfg),
                             err);
    int given = mf->src_vocab.size > 0;  /* train.init_from: the model's own units and labels */
    if (status == 0 && !given) status = learn_segmenter(&mf->seg, cfg, &pairs, train_idx, n_train, con, err);
    if (status == 0 && !given) {
        char **labels = xmalloc(sizeof(char *) * (size_t)n_train);
        for (int i = 0; i < n_train; i++)
            labels[i] = tsv.pairs[pairs.index[train_idx[i]]].tgt;
        if (vocab_labels(&mf->tgt_vocab, labels, n_train, err)) {
            char why[ERROR_LEN];
            snprintf(why, sizeof why, "%s", err->msg);
            status = error_set(err, "%s: %s", cfg->train, why);
        } else if (mf->tgt_vocab.size - VOCAB_SPECIALS < 2) {
            status = error_set(err, "%s: every one of the %d training lines has the label \"%s\": a classifier needs "
                                    "at least two classes", cfg->train, n_train, labels[0]);
        } else {
            status = check_label_spread(&mf->tgt_vocab, labels, n_train, cfg, err);
        }
        free(labels);
    }
    if (status == 0) {
        corpus_segment(&pairs, &mf->seg);
        corpus_segment(&valid_pairs, &mf->seg);
        if (given && cfg->extend_vocab) extend_vocabularies(ds, mf, cfg, &pairs, train_idx, n_train, 1);
        if (!given) {
            VocabCounter *sc = vocab_counter_new(), *labels = vocab_counter_new();
            corpus_count(&pairs, train_idx, n_train, sc, labels);
            vocab_build(&mf->src_vocab, sc, cfg->min_count, cfg->max_vocab);
            status = check_vocab_words(cfg, mf, (VocabCounter *const[2]){sc, NULL}, err);
            vocab_counter_free(labels);
            vocab_counter_free(sc);
        }
    }
    if (status == 0) {
        int unseen, line = 0;
        const char *label = NULL;
        ds->train = encode_labelled(&tsv, &pairs, train_idx, n_train, mf, &ds->n_train, &unseen, &line, &label);
        if (unseen)  /* only under train.init_from: the model's label set */
            status = error_set(err, "%s: line %d: the label \"%s\" is not one of the model's %d (train.init_from), nor "
                                    "are %d more", cfg->train, line, label, mf->tgt_vocab.size - VOCAB_SPECIALS,
                               unseen - 1);
        const TsvCorpus *vt = cfg->valid ? &valid_tsv_pairs : &tsv;
        const PairTokens *vp = cfg->valid ? &valid_pairs : &pairs;
        ds->valid = encode_labelled(vt, vp, cfg->valid ? NULL : valid_idx, cfg->valid ? valid_pairs.n : n_valid, mf,
                                    &ds->n_valid, &unseen, &line, &label);
        if (status == 0 && unseen)
            console_warn(con, "%s: %d validation line%s with a label training never saw (line %d: \"%s\"): not "
                              "validated", cfg->valid ? cfg->valid : cfg->train, unseen, unseen == 1 ? "" : "s", line,
                         label);
        ds->train_fingerprint = examples_fingerprint(ds->train, ds->n_train);
        ds->valid_fingerprint = examples_fingerprint(ds->valid, ds->n_valid);
        ds->max_src = ds->max_tgt = 1;
        for (int i = 0; i < ds->n_train; i++)
            if (ds->train[i].src_len > ds->max_src) ds->max_src = ds->train[i].src_len;
    }
    free(train_idx);
    free(valid_idx);
    pair_tokens_free(&pairs);
    pair_tokens_free(&valid_pairs);
    tsv_free(&tsv);
    tsv_free(&valid_tsv_pairs);
    if (status) return -1;
    console_say(con, "%d training lines, %d validation lines; %d classes, vocabulary of %d %s", ds->n_train,
                ds->n_valid, mf->tgt_vocab.size - VOCAB_SPECIALS, mf->src_vocab.size, tokenizer_units(mf->seg.kind));
    return 0;
}

/* ---------------------------------------------------------------- preparing */

int dataset_prepare(Dataset *ds, ModelFile *mf, const Config *cfg, const char *valid_tsv, Console *con, Error *err)
{
    memset(ds, 0, sizeof *ds);
    if (!strcmp(cfg->type, "classifier")) return prepare_classifier(ds, mf, cfg, valid_tsv, con, err);
    PairTokens pairs, valid_pairs = {0};
    TsvCorpus tsv, valid_tsv_pairs = {0};
    if (read_pairs(cfg, mf, cfg->train, &tsv, &pairs, con, err)) return -1;
    int *train_idx, *valid_idx, n_train, n_valid;
    if (cfg->valid) {
        if (read_pairs(cfg, mf, cfg->valid, &valid_tsv_pairs, &valid_pairs, con, err)) {
            pair_tokens_free(&pairs);
            tsv_free(&tsv);
            return -1;
        }
        corpus_split(pairs.n, 0.0, (uint64_t)cfg->seed, &train_idx, &n_train, &valid_idx, &n_valid);
    } else {
        corpus_split(pairs.n, cfg->valid_fraction, (uint64_t)cfg->seed, &train_idx, &n_train, &valid_idx, &n_valid);
    }
    int status = 0;
    if (n_train == 0)
        status = error_set(err, "%s: no pairs left for training after the validation split", cfg->train);
    else if (!cfg->valid && valid_tsv)
        status = write_valid(ds, valid_tsv, &tsv, &pairs, valid_idx, n_valid, 1, 2, err);
    int given = mf->src_vocab.size > 0;  /* train.init_from: the model's own units */
    if (status == 0 && !given) status = learn_segmenter(&mf->seg, cfg, &pairs, train_idx, n_train, con, err);
    if (status == 0) {
        corpus_segment(&pairs, &mf->seg);
        corpus_segment(&valid_pairs, &mf->seg);
        if (given && cfg->extend_vocab) extend_vocabularies(ds, mf, cfg, &pairs, train_idx, n_train, 0);
        if (!given) {
            /* data.joint_vocab: both sides counted together, so both vocabularies are the same. */
            VocabCounter *sc = vocab_counter_new(), *tc = cfg->joint_vocab ? sc : vocab_counter_new();
            corpus_count(&pairs, train_idx, n_train, sc, tc);
            vocab_build(&mf->src_vocab, sc, cfg->min_count, cfg->max_vocab);
            vocab_build(&mf->tgt_vocab, tc, cfg->min_count, cfg->max_vocab);
            status = check_vocab_words(cfg, mf, (VocabCounter *const[2]){sc, tc}, err);
            if (tc != sc) vocab_counter_free(tc);
            vocab_counter_free(sc);
        }
    }
    if (status == 0) {
        ds->train = corpus_encode(&pairs, train_idx, n_train, &mf->src_vocab, &mf->tgt_vocab);
        ds->n_train = n_train;
        if (cfg->valid) {
            ds->valid = corpus_encode(&valid_pairs, NULL, valid_pairs.n, &mf->src_vocab, &mf->tgt_vocab);
            ds->n_valid = valid_pairs.n;
            keep_bleu_pairs(ds, cfg, mf, &valid_tsv_pairs, &valid_pairs, NULL);
        } else {
            ds->valid = corpus_encode(&pairs, valid_idx, n_valid, &mf->src_vocab, &mf->tgt_vocab);
            ds->n_valid = n_valid;
            keep_bleu_pairs(ds, cfg, mf, &tsv, &pairs, valid_idx);
        }
        ds->train_fingerprint = examples_fingerprint(ds->train, ds->n_train);
        ds->valid_fingerprint = examples_fingerprint(ds->valid, ds->n_valid);
        /* Subword units make sentences longer than data.max_len words: buffers are sized by these. */
        ds->max_src = ds->max_tgt = 1;
        for (int i = 0; i < ds->n_train; i++) {
            if (ds->train[i].src_len > ds->max_src) ds->max_src = ds->train[i].src_len;
            if (ds->train[i].tgt_len > ds->max_tgt) ds->max_tgt = ds->train[i].tgt_len;
        }
    }
    free(train_idx);
    free(valid_idx);
    pair_tokens_free(&pairs);
    pair_tokens_free(&valid_pairs);
    tsv_free(&tsv);
    tsv_free(&valid_tsv_pairs);
    if (status) return -1;
    console_say(con, "%d training pairs, %d validation pairs; vocabularies: %d source, %d target %s", ds->n_train,
                ds->n_valid, mf->src_vocab.size, mf->tgt_vocab.size, tokenizer_units(mf->seg.kind));
    return 0;
}

void dataset_free(Dataset *ds)
{
    if (ds->valid_pending) outfile_discard(&ds->valid_out);
    examples_free(ds->train, ds->n_train);
    examples_free(ds->valid, ds->n_valid);
    for (int i = 0; i < ds->n_bleu; i++) {
        free(ds->bleu_src[i]);
        free(ds->bleu_ref[i]);
    }
    free(ds->bleu_src);
    free(ds->bleu_ref);
    memset(ds, 0, sizeof *ds);
}

/* A classifier's baseline: the training classes' add-one frequencies as the prediction. */
static double prior_baseline(const Dataset *ds, int classes)
{
    double *count = xcalloc(classes, sizeof(double)), total = classes + ds->n_train, nll = 0;
    for (int i = 0; i < ds->n_train; i++)
        count[ds->train[i].label] += 1;
    for (int i = 0; i < ds->n_valid; i++)
        nll -= log((count[ds->valid[i].label] + 1) / total);
    free(count);
    return ds->n_valid ? nll / ds->n_valid : 0;
}

double dataset_majority_accuracy(const Dataset *ds, int classes, int *majority)
{
    long *count = xcalloc(classes, sizeof(long)), right = 0;
    for (int i = 0; i < ds->n_train; i++)
        count[ds->train[i].label]++;
    *majority = 0;
    for (int c = 1; c < classes; c++)
        if (count[c] > count[*majority]) *majority = c;
    for (int i = 0; i < ds->n_valid; i++)
        right += ds->valid[i].label == *majority;
    free(count);
    return ds->n_valid ? (double)right / ds->n_valid : 0;
}

double dataset_unigram_baseline(const Dataset *ds, int tgt_vocab)
{
    if (ds->n_train > 0 && ds->train[0].tgt_len == 0) return prior_baseline(ds, tgt_vocab - VOCAB_SPECIALS);
    double *count = xcalloc(tgt_vocab, sizeof(double)), total = tgt_vocab;
    for (int i = 0; i < ds->n_train; i++) {
        for (int j = 0; j < ds->train[i].tgt_len; j++)
            count[ds->train[i].tgt[j]] += 1;
        count[VOCAB_EOS] += 1;
        total += ds->train[i].tgt_len + 1;
    }
    double nll = 0;
    long n = 0;
    for (int i = 0; i < ds->n_valid; i++) {
        for (int j = 0; j <= ds->valid[i].tgt_len; j++) {
            int id = j < ds->valid[i].tgt_len ? ds->valid[i].tgt[j] : VOCAB_EOS;
            nll -= log((count[id] + 1) / total);
            n++;
        }
    }
    free(count);
    return n ? nll / n : 0;
}

void dataset_epoch_order(const Dataset *ds, const Config *cfg, int *order, Rng *rng)
{
    if (cfg->bucket) batch_epoch_order(order, ds->train, ds->n_train, cfg->batch_size, rng);
    else batch_shuffled_order(order, ds->n_train, rng);
}

int dataset_batch_at(const Dataset *ds, const Config *cfg, const int *order, int start, int end)
{
    int most = end - start < cfg->batch_size ? end - start : cfg->batch_size;
    if (cfg->batch_tokens <= 0) return most;
    long tokens = ds->train[order[start]].tgt_len + 1;
    int n = 1;
    while (n < most && tokens + ds->train[order[start + n]].tgt_len + 1 <= cfg->batch_tokens)
        tokens += ds->train[order[start + n++]].tgt_len + 1;
    return n;
}

long dataset_batches_per_epoch(const Dataset *ds, const Config *cfg)
{
    long by_size = (ds->n_train + cfg->batch_size - 1) / cfg->batch_size;
    if (cfg->batch_tokens <= 0) return by_size;
    long tokens = 0;
    for (int i = 0; i < ds->n_train; i++)
        tokens += ds->train[i].tgt_len + 1;
    long by_tokens = (tokens + cfg->batch_tokens - 1) / cfg->batch_tokens;
    return by_tokens > by_size ? by_tokens : by_size;
}

/* ---------------------------------------------------------------- export */

static void put_record(FILE *f, const char *name, const int *data, int ndim, const int *dims)
{
    int len = (int)strlen(name), dtype = 1;
    long n = 1;
    for (int d = 0; d < ndim; d++)
        n *= dims[d];
    fwrite(&len, 4, 1, f);
    fwrite(name, 1, len, f);
    fwrite(&dtype, 4, 1, f);
    fwrite(&ndim, 4, 1, f);
    fwrite(dims, 4, ndim, f);
    fwrite(data, 4, n, f);
}

int dataset_export(const Dataset *ds, const Config *cfg, const ModelFile *mf, const char *path, Console *con,
                   Error *err)
{
    /* Batches, not updates: with train.accumulate an update is several of them. With
     * train.batch_tokens an epoch's count depends on its order: all epochs' batches are
     * counted by drawing them. */
    long wanted = cfg->max_steps > 0 ? cfg->max_steps * cfg->accumulate : -1;
    long all = dataset_batches_per_epoch(ds, cfg) * cfg->epochs;
    Rng rng;
    int *order = xmalloc(sizeof(int) * ds->n_train);
    if (cfg->batch_tokens > 0) {
        rng_seed(&rng, (uint64_t)cfg->seed + 1);
        all = 0;
        for (int epoch = 1; epoch <= cfg->epochs && (wanted < 0 || all < wanted); epoch++) {
            dataset_epoch_order(ds, cfg, order, &rng);
            for (int start = 0; start < ds->n_train; all++)
                start += dataset_batch_at(ds, cfg, order, start, ds->n_train);
        }
    }
    long total = wanted >= 0 && wanted < all ? wanted : all;
    int n_test = ds->n_valid < 2000 ? ds->n_valid : 2000;
    OutFile o;
    if (outfile_open(&o, path, err)) {
        free(order);
        return -1;
    }
    FILE *f = o.f;
    int count = 3 * (int)total + 3;
    fwrite("NMTFIX01", 1, 8, f);
    fwrite(&count, 4, 1, f);
    int header[4] = {mf->src_vocab.size, mf->tgt_vocab.size, (int)total, n_test}, four = 4;
    put_record(f, "dims", header, 1, &four);
    /* The same order training draws: same seed, same calls. */
    rng_seed(&rng, (uint64_t)cfg->seed + 1);
    Batch batch = {0};
    long k = 0;
    char name[64];
    for (int epoch = 1; k < total; epoch++) {
        dataset_epoch_order(ds, cfg, order, &rng);
        for (int start = 0, n; start < ds->n_train && k < total; start += n, k++) {
            n = dataset_batch_at(ds, cfg, order, start, ds->n_train);
            batch_fill(&batch, ds->train, order + start, n);
            int sd[2] = {batch.S, n}, td[2] = {batch.T, n};
            snprintf(name, sizeof name, "batch.%ld.src", k);
            put_record(f, name, batch.src, 2, sd);
            snprintf(name, sizeof name, "batch.%ld.tgt_in", k);
            put_record(f, name, batch.tgt_in, 2, td);
            snprintf(name, sizeof name, "batch.%ld.tgt_out", k);
            put_record(f, name, batch.tgt_out, 2, td);
        }
    }
    free(order);
    batch_free(&batch);
    int smax = 1;
    for (int i = 0; i < n_test; i++)
        if (ds->valid[i].src_len > smax) smax = ds->valid[i].src_len;
    int *src = xcalloc((long)(n_test ? n_test : 1) * smax, sizeof(int)), *len = xcalloc(n_test ? n_test : 1, sizeof(int));
    for (int i = 0; i < n_test; i++) {
        memcpy(src + (long)i * smax, ds->valid[i].src, sizeof(int) * ds->valid[i].src_len);
        len[i] = ds->valid[i].src_len;
    }
    int ts[2] = {n_test, smax};
    put_record(f, "test.src", src, 2, ts);
    put_record(f, "test.len", len, 1, &n_test);
    free(src);
    free(len);
    if (outfile_commit(&o, err)) return -1;
    console_say(con, "wrote %ld batches and %d test sentences to %s", total, n_test, path);
    return 0;
}
