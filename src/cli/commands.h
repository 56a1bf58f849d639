/* commands.h — nmt's commands, one file each (cli/cmd_NAME.c), and what they share.
 *
 * Each command file defines its option table (options.h: the options, where their
 * values go, the command's --help text) and its run function, which gets the parsed
 * arguments. main.c's table of commands (cli_commands) names them all; it parses a
 * command's arguments by its table, runs it, and turns its status into the exit status:
 *
 *     0 success; 1 the job failed (the message said why); 2 a usage error;
 *     128 + a signal's number: nmt train stopped by SIGINT or SIGTERM.
 */
#ifndef COMMANDS_H
#define COMMANDS_H

#include <stdio.h>

#include "cli/options.h"    /* defines: OptionTable, Option, Parsed, usage_error */
#include "decode/decode.h"  /* defines: LENGTH_AVERAGE */
#include "decode/workers.h" /* defines: Workers, WORKERS_MAX */
#include "eval/bleu.h"      /* defines: MetricOptions */
#include "files/modelfile.h" /* defines: ModelFile */
#include "io/lines.h"       /* defines: LINES_MAX_BYTES_MIN, LINES_MAX_BYTES_MAX */
#include "io/outfile.h"     /* defines: OutFile */
#include "base/util.h"      /* defines: Error */

/* A command's run function: args is the struct of its option table (already parsed),
 * p its operands. Returns the exit status. */
typedef int (*CommandRun)(void *args, const Parsed *p);

/* A row of main.c's table of commands. */
typedef struct {
    const OptionTable *options;   /* its name, options and help */
    CommandRun run;
    int uses_blas;                /* multiplies matrices (OpenBLAS): refused under a memory
                                     limit too low for OpenBLAS's buffers (blas.h) */
    const char *summary;          /* its line(s) in nmt --help, after the two spaces */
} Command;

/* Every command, in the order nmt --help lists them (main.c). */
const Command *cli_commands(int *n);

extern const OptionTable train_options, translate_options, classify_options, eval_options, info_options,
    score_options, plot_options, average_options, bpe_options, serve_options, quantize_options,
    shortlist_options;
int cmd_train(void *args, const Parsed *p);
int cmd_translate(void *args, const Parsed *p);
int cmd_classify(void *args, const Parsed *p);
int cmd_eval(void *args, const Parsed *p);
int cmd_info(void *args, const Parsed *p);
int cmd_score(void *args, const Parsed *p);
int cmd_plot(void *args, const Parsed *p);
int cmd_average(void *args, const Parsed *p);
int cmd_quantize(void *args, const Parsed *p);
int cmd_shortlist(void *args, const Parsed *p);
int cmd_bpe(void *args, const Parsed *p);
int cmd_serve(void *args, const Parsed *p);

/* ---------------------------------------------------------------- shared by the commands */

/* 1 if mf is a classifier (model.type "classifier"), 0 if a translation model: the one
 * place the commands ask a model's kind. */

/* Writes "nmt: " and err's message to stderr; returns 1, the exit status of a failed job. */
int fail(const Error *err);

/* A command whose output goes to a file (out_path set, not "-") keeps going when the
 * reader of its messages goes away (nmt translate IN -o OUT 2>&1 | head): SIGPIPE is
 * ignored, a message that cannot be written is dropped, and the file is finished. With
 * its output on standard output (no -o, -o -) a reader that goes away still ends it
 * quietly by SIGPIPE, as it ends cat. */
void keep_going_without_reader(const char *out_path);

/* The end of a command's output: standard output stays open; an -o file becomes the
 * target if the command succeeded (status 0), else the target is left as it was.
 * Returns the command's status, or -1 with err if writing the file failed. */
int output_done(OutFile *of, int status, Error *err);

/* A usage error naming p's first operand past the first max ("unexpected argument"),
 * returning 2; 0 when there are no more than max. */
int too_many_operands(const OptionTable *t, const Parsed *p, int max);

/* Calls read(in, name, ctx, err) for each input in turn (a path, or "-": standard input,
 * named "stdin"), stopping at the first non-zero return; an input that cannot be opened
 * is an error naming it. Returns 0, or -1 with err. */
typedef int (*InputReader)(FILE *in, const char *name, void *ctx, Error *err);
int read_inputs(char *const *inputs, int n_inputs, InputReader read, void *ctx, Error *err);
/* The ctx of translate's and classify's InputReader: the workers over the model(s),
 * the output, the command's options (TranslateOptions, ClassifyOptions), the lines read
 * so far. */
typedef struct {
    Workers *workers;
    FILE *out;
    const void *opt;
    long lines;
} StreamJob;

/* Reads a model of a run that translates, checked as every model of an ensemble is:
 * a translation model (a classifier has no decoder), and, after the first (first
 * NULL for the first itself), one that shares first's vocabularies and text options
 * (modelfile_compatible, what differs named); then prepared for decoding with products
 * of compute_type (prepare_model). decode_only: the run only decodes (nmt translate), so
 * a file with int8 weights is read for int8 decoding (modelfile_read_decoding) unless
 * float32 is asked for. 0, or -1 with err naming the file (mf left empty). */
int read_translator(const char *path, ModelFile *mf, const ModelFile *first, const char *first_path, int compute_type,
                    int decode_only, Error *err);

/* The models of a run that translates: the first (models[0], read by the caller) and
 * the members of an ensemble (--models A B ...) after it, read and checked as nmt
 * translate and nmt eval check them (read_translator). all[0..n) are the Workers'
 * models (command_workers), the first first; with n above 1, opt->ensemble decodes
 * with all of them. */
typedef struct {
    ModelFile *more;        /* (n - 1) the members after the first */
    ModelFile **all;        /* (n) first, then more's */
    int n;
} EnsembleFiles;

/* Reads models[1..n_models) beside first (models[0]'s file) into ef, each prepared for
 * compute_type as read_translator prepares it. 0, or -1 with err naming the file that
 * cannot be read or join; either way ensemble_files_close releases what was read (not
 * first). */
int ensemble_files_open(EnsembleFiles *ef, char *const *models, int n_models, ModelFile *first, int compute_type,
                        int decode_only, Error *err);
void ensemble_files_close(EnsembleFiles *ef);

/* Makes an empty list of inputs the one input "-", standard input. */
void inputs_or_stdin(char *const **inputs, int *n_inputs);

/* The count of "-" (standard input) among inputs. */
int count_stdin(char *const *inputs, int n);

/* The rows several commands have (each with its own help text):
 *   {OPTION_MAX_LINE_BYTES(T, field), .help = "..."} */
#define OPTION_MAX_LINE_BYTES(T, field)                                                                   \
    .name = "--max-line-bytes", .kind = OPT_INT, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .lo = LINES_MAX_BYTES_MIN, .hi = LINES_MAX_BYTES_MAX, .metavar = "N",                                 \
    .needs = "a number of bytes from 1024 to 1073741824"
#define OPTION_THREADS(T, field)                                                                   \
    .name = "--threads", .kind = OPT_INT, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .lo = 0, .hi = 256, .metavar = "N"
/* --workers N of translate, eval and classify (decode/workers.h); the commands' defaults
 * set it to WORKERS_DEFAULT: a worker per core (as many as the memory limit leaves room
 * for), or one when --threads gives OpenBLAS's threads to one worker. */
#define WORKERS_DEFAULT (-1)
#define OPTION_WORKERS(T, field)                                                                   \
    .name = "--workers", .kind = OPT_INT, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .lo = 0, .hi = WORKERS_MAX, .metavar = "N", .needs = "a number of workers from 0 (one per core) to 64"
/* The workers' help text (one per command would say the same). */
#define WORKERS_HELP                                                                      \
    "decode N batches at once, each on its own thread with one OpenBLAS\n"               \
    "thread (0 and the default: one per core; 1 with --threads); the output\n"          \
    "is the same"
/* --threads N > 1 sets OpenBLAS's threads for one worker; several workers compute on one
 * thread each: a usage error (returns 2) when both ask for more than one, else 0. */
int workers_usage(const OptionTable *t, int workers, int threads);
/* The workers of a command that decodes with n_models models (read by the caller), after
 * setting OpenBLAS's threads for one worker (--threads; 0: one, as each of several
 * workers computes, so that the output is the same for any --workers): NULL with err
 * if the memory limit leaves no room for the workers asked for (workers_new). With
 * WORKERS_DEFAULT, one worker if threads is above 0, else a worker per core, fewer if
 * the memory limit leaves room for fewer (at least one). */
Workers *command_workers(ModelFile *const *models, int n_models, int workers, int threads, Error *err);

/* --compute-type float32|int8, nmt translate's and nmt eval's: how decoding computes
 * its products (CTranslate2's compute_type; kernels/prepared.h). */
extern const char *const compute_type_names[];
extern const int compute_type_values[];
#define OPTION_COMPUTE_TYPE(T, field)                                                                          \
    .name = "--compute-type", .kind = OPT_CHOICE, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .choices = compute_type_names, .choice_values = compute_type_values, .metavar = "float32|int8",          \
    .needs = "float32 or int8"
/* The value of --compute-type not given: as the file's weights are, int8 for a file
 * with int8 weights (nmt quantize) whose family has int8 products, else float32. */
#define COMPUTE_AS_FILE (-1)
/* Prepares a loaded model (read from path) for decoding with products of this
 * ComputeType, or COMPUTE_AS_FILE (model_prepare_decoding). 0, or -1 with err when
 * int8 was asked for and the model's family has no int8 products. */
int prepare_model(ModelFile *mf, const char *path, int compute_type, Error *err);

/* --shortlist FILE (decode/lexicon.h) read for models[0]'s vocabularies into sl, which
 * every one of models[0..n) then decodes with (an ensemble's share their vocabularies);
 * a note names the lines of units the model does not have. 0, or -1 with err. sl is
 * the caller's to free (shortlist_free) after the models are done decoding. */
int use_shortlist(const char *path, ModelFile *const *models, int n, const LineLimit *limit, Shortlist *sl,
                  Error *err);

/* --beam K and --length-penalty A, nmt translate's and nmt eval's. */
#define OPTION_BEAM(T, field)                                                                   \
    .name = "--beam", .kind = OPT_INT, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .lo = 1, .hi = 100, .metavar = "K"
#define OPTION_LENGTH_PENALTY(T, field)                                                                   \
    .name = "--length-penalty", .kind = OPT_FLOAT, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .lo = 0, .hi = 5, .word = "avg", .word_value = LENGTH_AVERAGE, .metavar = "A",                          \
    .needs = "a number from 0 to 5 or avg"

/* sacreBLEU's scoring options, shared by nmt score and nmt eval: -tok/--tokenize NAME,
 * -l/--language-pair SRC-TGT, -lc/--lowercase, as the options left them. */
typedef struct {
    const char *tokenize;        /* -tok's NAME, or NULL */
    const char *language_pair;   /* -l's SRC-TGT, or NULL */
    int lowercase;
} MetricArgs;
/* The checks of -tok's and -l's values (Option.check). */
int check_tokenizer(const char *value, const char *next, char *why, size_t why_len);
int check_language_pair(const char *value, const char *next, char *why, size_t why_len);
/* What they say: an explicit -tok wins over -l's choice, whatever the order; -l chooses
 * by the target's code (bleu_tokenize_for_language, with a note on stderr where nmt has
 * no MeCab). *tokenize_given: 0 neither, 1 by -l, 2 by -tok. */
void metric_resolve(const MetricArgs *a, MetricOptions *m, int *tokenize_given);
#define OPTION_TOKENIZE(T, field)                                                                   \
    .name = "--tokenize", .kind = OPT_STRING, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .alias = "-tok", .metavar = "NAME", .check = check_tokenizer, .needs = "a tokeniser: 13a, zh, char or none"
#define OPTION_LANGUAGE_PAIR(T, field)                                                              \
    .name = "--language-pair", .kind = OPT_STRING, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .alias = "-l", .metavar = "SRC-TGT", .check = check_language_pair, .needs = "SRC-TGT language codes, such as en-zh"
#define OPTION_LOWERCASE(T, field)                                                                 \
    .name = "--lowercase", .kind = OPT_FLAG, .at = offsetof(T, field), .size = sizeof(((T *)0)->field), \
    .alias = "-lc"
#endif
