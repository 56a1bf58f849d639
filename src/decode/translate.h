/* translate.h — `nmt translate`: raw lines in, translated lines out.
 *
 * A line is normalised and tokenised exactly as the training data was (the options
 * travel in the model file), mapped to ids, decoded (greedy or beam search), and the
 * output words are detokenised into a sentence. Line i of the output always answers
 * line i of the input: an empty line gives an empty line, and a line that cannot be
 * read (invalid UTF-8) gives an empty line and a warning naming its number.
 *
 * Output formats (translate_stream), one record per input line unless --nbest:
 *   plain            the sentence
 *   --align          the sentence, " ||| ", and the hard alignment: for each output
 *                    word i the source token j it attends to most, as "j-i" pairs
 *                    (0-based, Moses / fast_align order: source-target)
 *   --nbest N        N lines in Moses/Marian's n-best form, best first:
 *                      "k ||| sentence ||| F0= logprob ||| score"
 *                    k = 0-based input line, counted on across several input files;
 *                    logprob = log P(sentence | source); score = what the search ranks
 *                    by, logprob / lp(length); with --align the alignment as a field
 *                    after the sentence, where Marian puts it. NBEST_NMT: nmt 0.1's
 *                    "k ||| sentence ||| score" with the alignment last
 *   --attention-json one JSON object per line: line, source and output tokens
 *                    (<eos> included when emitted), translation, score, and the
 *                    attention matrix, one row per output token
 * --attention-svg DIR additionally writes DIR/LINE.svg, a heatmap of the best
 * hypothesis' attention (LINE 1-based, six digits). --replace-unk replaces each output
 * <unk> by the source token it attends to most, or by that token's entry in the
 * --unk-dict dictionary (Luong et al. 2015).
 *
 * Scores (--scores; --word-scores adds each unit's): the model's log-probability of
 * what it wrote, log P(output | source) in natural log, summed over the output units
 * with <eos> (the unit count counts it too), and quality estimates as Bergamot's
 * unsupervised QE makes them: a word's QE is the mean log-probability of its units
 * (<eos> belongs to no word), the sentence's the mean of its words' (an output with
 * no word: its <eos>'s log-probability). They are in (-inf, 0]; near 0 the model was
 * sure of every word, and a low one marks a translation to check.
 *   plain            the line, then TAB LOGPROB TAB UNITS (and TAB the units'
 *                    log-probabilities, space-separated)
 *   --nbest N        the features field "F0= LOGPROB QE= SENTENCE_QE WordQE= Q1 Q2 ..."
 *                    (and "UnitLogProbs= L1 L2 ..."), Moses's dense features
 *   --attention-json "logprob", "unit_scores" (one per output token), "words",
 *                    "word_qe" and "qe"
 * Without --scores every output is as before, byte for byte.
 *
 * Prefixes (--prefix FILE): line i of FILE, tokenised and segmented as the model's
 * target side is, begins line i's translation (decode.h, SearchSpec); an empty line
 * of FILE changes nothing. Sampling (--sample K, --sample-p P, --temperature T, --seed
 * S): decode/sample.h; each line draws from the stream of its index in the whole
 * input (counted over several input files), whatever the batch.
 */
#ifndef TRANSLATE_H
#define TRANSLATE_H

#include <stdio.h>

#include "io/lines.h"     /* defines: LineLimit */
#include "files/modelfile.h" /* defines: ModelFile */
#include "decode/sample.h"    /* defines: Sampling */
#include "decode/unkdict.h"   /* defines: UnkDict */
#include "decode/workers.h"   /* defines: Workers, Worker */

/* A source line as the model's units: normalised and tokenised as the training data
 * was, then segmented (BPE, characters, SentencePiece). -1 with err (and an empty
 * list) if the line cannot be read (invalid UTF-8). nmt classify reads lines alike. */
int source_units(const ModelFile *mf, const char *line, TokenList *out, Error *err);

/* Longest source, in tokens, that is translated; longer ones are cut with a warning. */
#define TRANSLATE_MAX_SOURCE 400

enum { NBEST_MOSES, NBEST_NMT };   /* --nbest-format moses | nmt */

/* The look-ahead: lines read before they are sorted into batches (at least a batch),
 * and the bytes that end a window earlier. */
#define TRANSLATE_WINDOW 1024
#define TRANSLATE_WINDOW_BYTES (8L << 20)

/* What one call translates with and how: the search, what to keep of it, and (for
 * translate_stream) how to write it. A zeroed struct is greedy search with model 0, the
 * defaults of `nmt translate`; a server fills one per request. Grows with the options
 * (append fields whose zero is the old behaviour). */
typedef struct {
    int max_len;   /* output words at most; 0: 2 * source length + 10 */
    int batch;     /* lines decoded together (0 or 1: one at a time, each answered at once) */
    int beam;      /* beam size; 0 or 1: greedy search */
    float length_penalty;  /* GNMT alpha for beam search (decode.h) */
    int nbest;     /* hypotheses written per line (0 or 1: the best only); implies beam >= nbest */
    int nbest_format;      /* NBEST_MOSES (0) or NBEST_NMT */
    int align;             /* append the hard alignment */
    int attention_json;    /* JSON records with the attention matrix instead of text */
    const char *attention_svg;  /* directory for one heatmap per line, or NULL */
    int align_layer;       /* a Transformer's decoder layer (1-based) whose cross-attention,
                              averaged over heads, is the attention above; 0: the last */
    int attention_heads;   /* with attention_svg, a Transformer's: also one heatmap per
                              head of that layer (with attention: the per-head maps) */
    int replace_unk;       /* replace output <unk> through attention */
    const UnkDict *unk_dict;    /* for replace_unk, or NULL: copy the source token */
    /* Which of the workers' models translate (workers.h): model `model` (0-based) alone,
     * or with ensemble all of them together, model 0 reading and writing the text, their
     * next-word probabilities averaged each step (decode.h, ensemble_decoder; they share
     * one target vocabulary and one way of reading text: modelfile_compatible). */
    int model;
    int ensemble;
    int attention;         /* keep the tokens and the attention matrix in each Translation
                              (implied by align, attention_json, attention_svg, replace_unk) */
    /* The longest input line (lines.h; nmt translate's --max-line-bytes): a longer line
     * to translate is translated as empty, with a warning; in nmt eval's TEST.tsv and an
     * --unk-dict file, an error. */
    LineLimit lines;
    /* --scores, --word-scores (above). */
    int scores, word_scores;
    /* Draw the words (--sample, --sample-p, --temperature, --seed) instead of searching. */
    int sampling;
    Sampling sample;
    /* --prefix FILE: its lines, read along with the input's (one per input line), and
     * its name for messages; NULL: none. */
    LineReader *prefix;
    const char *prefix_name;
} TranslateOptions;

/* One hypothesis for one input line. */
typedef struct {
    char *text;            /* the detokenised sentence (malloc'd) */
    float score;           /* beam search: length-normalised log-probability; greedy:
                              the log-probability (decode.h, Hypothesis) */
    float logprob;         /* log P(text | source), <eos> included when emitted */
    /* Only when the options ask for attention (align, JSON, SVG, replace_unk): */
    char **src_tokens;     /* n_src source tokens as the model saw them */
    char **out_tokens;     /* n_out output tokens (after <unk> replacement), <eos> last if emitted */
    int n_src, n_out;
    int finished;          /* the hypothesis ended with <eos> (the last output token) */
    float *attn;           /* (n_out, n_src) attention weights */
    int heads;             /* with opt->attention_heads (best hypothesis only): */
    float *head_attn;      /* (heads, n_out, n_src) each head's weights */
    /* Only with opt->scores: */
    float *unit_logp;      /* (n_units) each output unit's log-probability, <eos> last if emitted */
    int n_units;
    char **words;          /* n_words words of the output (the units of each joined) */
    float *word_qe;        /* (n_words) each word's quality estimate */
    int n_words;
    float qe;              /* the sentence's */
} Translation;

void translation_free(Translation *t);

/* What worker_translate reports of a line in bad[i]: 0, or these bits. */
enum {
    TRANSLATE_BAD_UTF8 = 1,      /* the line is not valid UTF-8: translated as empty */
    TRANSLATE_CUT = 2,           /* longer than TRANSLATE_MAX_SOURCE tokens: only its start translated */
    TRANSLATE_BAD_PREFIX = 4,    /* its prefix is not valid UTF-8: no prefix */
    TRANSLATE_PREFIX_CUT = 8,    /* its prefix is longer than TRANSLATE_MAX_SOURCE units: its start only */
};

/* Bergamot's unsupervised quality estimates of an output of n units (<eos> not
 * counted in n): unit_logp (n + finished) each unit's log-probability, <eos>'s last
 * when finished; word_ends (n) nonzero where a unit ends a word (the last unit always
 * does: segmenter_word_ends). word_qe (room for n) gets each word's QE, the mean of its
 * units' log-probabilities, *n_words of them. Returns the sentence's QE, the mean of
 * its words'; an output with no word: <eos>'s log-probability (0 when not finished). */
float quality_estimates(const float *unit_logp, const unsigned char *word_ends, int n, int finished, float *word_qe,
                        int *n_words);

/* On worker k (workers.h), translates n lines together (one decoder batch) with the
 * models opt->model and opt->ensemble choose. out[i * k + j] (k = max(1, opt->nbest))
 * receives line i's j-th best hypothesis for j < count[i] (count may be NULL when k is
 * 1; an unreadable or empty line gets one empty hypothesis). bad[i] (may be NULL) gets
 * the line's TRANSLATE_* bits. Writes nothing but out, count, bad and the worker's own
 * state: any number of workers may translate at once. The lines are taken as lines
 * 0..n-1 of the input (sampling's streams) with no prefix: worker_translate_ordered. */
void worker_translate(Worker *k, char *const *lines, int n, const TranslateOptions *opt, Translation *out,
                      int *count, int *bad);

/* The models opt decodes with on worker k (opt->model alone, or with opt->ensemble all
 * of the worker's), *n_models of them, each with the worker's RunState for it. *files
 * and *states are malloc'd (the caller frees both arrays, not what they point to). */
void translate_models(Worker *k, const TranslateOptions *opt, ModelFile ***files, RunState ***states,
                      int *n_models);

/* On worker k, translates lines[order[0]], ..., lines[order[n - 1]] in batches of
 * `batch` lines, in that order, each line's results in its own slots (out[order[i] * k
 * + j], count[order[i]], bad[order[i]], as worker_translate; count and bad may be
 * NULL). Line i is line first_index + i (0-based) of the whole input: it samples from
 * that index's stream, the same draws whatever the batch, the order or the worker; and
 * prefix[i] (prefix NULL: none) begins its translation. Writes nothing else shared:
 * batches of one window may run on several workers. */
void worker_translate_ordered(Worker *k, char *const *lines, char *const *prefix, long first_index, const int *order,
                              int n, int batch, const TranslateOptions *opt, Translation *out, int *count, int *bad);

/* 1 when translate_stream sorts a window's lines by length into batches: opt->batch > 1
 * and no attention outputs (which come a batch at a time, as read). */
int translate_sorts(const TranslateOptions *opt);
/* The lines translate_stream reads ahead and orders together: at least TRANSLATE_WINDOW
 * (and at least a batch) when it sorts, else a batch. */
int translate_window(const TranslateOptions *opt);
/* order (n) = the order translate_stream translates a window's lines in: 0 .. n-1 sorted
 * by the lines' byte length, then input order, when translate_sorts; else 0 .. n-1. */
void translate_order(const TranslateOptions *opt, char *const *lines, int n, int *order);

/* The best translation of each of n lines as a malloc'd sentence in out[i] (the
 * plain-text view of worker_translate, used by eval and validation). */
void worker_translate_lines(Worker *k, char *const *lines, int n, const TranslateOptions *opt, char **out,
                            int *bad);

/* The best translations of n lines, out[i] for lines[i] (malloc'd), in batches of
 * `batch` lines (worker_translate_lines), the batches spread over the workers: the same
 * sentences whatever the number of workers. bad as for worker_translate (may be NULL). */
void workers_translate_lines(Workers *w, char *const *lines, int n, int batch, const TranslateOptions *opt,
                             char **out, int *bad);

/* Reads lines from in until EOF and writes one record per line (see above) to out, in
 * input order, so that it works inside a pipeline:
 *   - one line at a time, each answered and flushed before the next is read, when
 *     opt->batch is 0 or 1;
 *   - else (opt->batch lines together) the lines read so far, up to TRANSLATE_WINDOW of
 *     them (or TRANSLATE_WINDOW_BYTES), are sorted by length into batches, and each
 *     line is written and flushed as soon as it and the lines before it are translated.
 *     The window closes early when a pipe or terminal has nothing more yet (lines.h,
 *     lines_read_windows): a writer that waits for each answer gets it. With attention
 *     outputs (--align, JSON, heatmaps, --replace-unk) the window is one batch, in input
 *     order.
 * With several workers, up to two batches per worker are read ahead and translated at
 * once: the same bytes, in the same order, as one worker writes. Warnings name in_name
 * and the line in it (one longer than opt->lines is translated as empty); n-best, JSON
 * and heatmap records count on from *lines_before (the lines of earlier inputs), which
 * grows by the lines read. Returns 0, or -1 on a read or write error ("NAME: read
 * error: REASON"). */
int translate_stream(Workers *w, FILE *in, FILE *out, const char *in_name, const TranslateOptions *opt,
                     long *lines_before, Error *err);
#endif
