/* cmd_serve.c — nmt serve: models behind HTTP, with a page to look into them
 * (serve/http.h: the server, serve/api.h: the endpoints, serve/engine.h: the workers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"    /* defines: OptionTable, Parsed, usage_error, fail, command_workers */
#include "files/modelfile.h" /* defines: ModelFile, modelfile_read */
#include "serve/api.h"       /* defines: Api */
#include "serve/engine.h"    /* defines: Engine, engine_new */
#include "serve/http.h"      /* defines: ServerOptions, server_run, listen_address_parse */

typedef struct {
    ServerOptions server;
    RequestLimits limits;
    int threads, workers, queue;
    int compute_type;         /* --compute-type: ComputeType */
    const char *shortlist_path;  /* --shortlist: the one model's */
} ServeArgs;

static int check_listen(const char *value, const char *next, char *why, size_t why_len)
{
    (void)next;
    char host[256];
    int port;
    Error err;
    if (listen_address_parse(value, host, sizeof host, &port, &err) == 0) return 0;
    snprintf(why, why_len, "%s", err.msg);
    return -1;
}

static const Option serve_rows[] = {
    {"--listen", OPT_STRING, OPTION_AT(ServeArgs, server.listen), .metavar = "ADDR:PORT", .check = check_listen,
     .help = "the address and port to listen on (default 127.0.0.1:8080, this\n"
             "machine only; [::1]:PORT for IPv6; port 0: any free one, printed)"},
    {OPTION_WORKERS(ServeArgs, workers), .help = "requests decoded at once, each on its own worker with one\n"
                                                 "OpenBLAS thread (0: one per core; default 1)"},
    {OPTION_THREADS(ServeArgs, threads),
     .help = "OpenBLAS threads for one worker, as for nmt translate"},
    {OPTION_COMPUTE_TYPE(ServeArgs, compute_type),
     .help = "the models' products, as for nmt translate and nmt classify\n"
             "(prepared once, shared by the workers)"},
    {"--shortlist", OPT_STRING, OPTION_AT(ServeArgs, shortlist_path), .metavar = "FILE",
     .help = "score only the target units FILE keeps for each batch's source\n"
             "units, as nmt translate --shortlist (one translation model)"},
    {"--batch", OPT_INT, OPTION_AT(ServeArgs, limits.batch), .lo = 1, .hi = 4096, .metavar = "N",
     .help = "a request's lines are decoded N at a time (default 16), as\n"
             "nmt translate --batch N reads them; a request's \"batch\" overrides it"},
    {"--max-lines", OPT_INT, OPTION_AT(ServeArgs, limits.max_lines), .lo = 1, .hi = 100000, .metavar = "N",
     .help = "the most lines in one request (default 256; more: 413)"},
    {"--max-body-bytes", OPT_INT, OPTION_AT(ServeArgs, server.max_body_bytes), .lo = 1024, .hi = 1L << 30,
     .metavar = "N", .needs = "a number of bytes from 1024 to 1073741824",
     .help = "the longest request body (default 1048576, 1 MiB; longer: 413)"},
    {"--queue", OPT_INT, OPTION_AT(ServeArgs, queue), .lo = 0, .hi = 100000, .metavar = "N",
     .help = "requests that may wait for a busy worker (default 16); one\n"
             "more gets 503 at once"},
    {"--timeout", OPT_INT, OPTION_AT(ServeArgs, server.timeout_s), .lo = 1, .hi = 3600, .metavar = "S",
     .help = "seconds (default 30) a connection may sit idle, a request's body may\n"
             "take to arrive, and a request may wait for a worker (then 503)"},
    {"--connections", OPT_INT, OPTION_AT(ServeArgs, server.max_connections), .lo = 1, .hi = 10000, .metavar = "N",
     .help = "connections open at once (default 64); more are closed at once"},
};

static const ServeArgs serve_defaults = {
    .server = {.listen = "127.0.0.1:8080", .max_body_bytes = 1L << 20, .max_connections = 64, .timeout_s = 30},
    .limits = {.max_lines = 256, .batch = 16},
    .workers = 1,
    .compute_type = COMPUTE_AS_FILE,
    .queue = 16,
};

const OptionTable serve_options = {
    .name = "serve",
    .usage =
        "usage: nmt serve MODEL.bin [MODEL.bin ...] [--listen ADDR:PORT] [--workers N] [--threads N]\n"
        "                 [--compute-type float32|int8] [--shortlist FILE] [--batch N] [--max-lines N]\n"
        "                 [--max-body-bytes N] [--queue N] [--timeout S] [--connections N]\n"
        "\n"
        "Serve translation models (and classifiers) over HTTP: each model file is read once\n"
        "and shared by the workers. GET / is a page to translate with and look at the\n"
        "attention; GET /health, GET /models (each model's nmt info --json), POST /translate\n"
        "{\"text\": [LINES], \"beam\": K, \"nbest\": N, \"length_penalty\": A, \"attention\": true,\n"
        "\"heads\": true, \"layer\": N, \"model\": NAME, ...} answers as nmt translate would, and\n"
        "POST /classify {\"text\": [LINES]} as nmt classify. A model's NAME is its path as given.\n"
        "Prints the address on standard output, one line per request on standard error.\n"
        "\n",
    OPTION_ROWS(serve_rows),
    .column = 27,
    .epilogue =
        "\n"
        "Errors are JSON {\"error\": ...}: 400 a bad request, 404, 405, 413 a body or request\n"
        "over a limit, 503 too many waiting or no worker within --timeout. SIGTERM or SIGINT:\n"
        "the requests in flight are answered, then nmt exits 0. Exit 1: a model cannot be read\n"
        "or the address listened on; 2 usage error.\n",
    .args_size = sizeof(ServeArgs),
    .defaults = &serve_defaults,
};

/* An address only this machine reaches. */
static int loopback(const char *listen)
{
    return !strncmp(listen, "127.", 4) || !strncmp(listen, "[::1]:", 6) || !strncmp(listen, "localhost:", 10);
}

int cmd_serve(void *args, const Parsed *p)
{
    ServeArgs *a = args;
    if (p->n_operands == 0) return usage_error(&serve_options, "serve: missing MODEL.bin");
    for (int i = 0; i < p->n_operands; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(p->operands[i], p->operands[j]))
                return usage_error(&serve_options, "serve: %s is given twice (a model is named by its path)",
                                   p->operands[i]);
    if (workers_usage(&serve_options, a->workers, a->threads)) return 2;
    if (a->shortlist_path && p->n_operands > 1)
        return usage_error(&serve_options, "serve: --shortlist is for one model's vocabulary: serve one MODEL.bin "
                                           "with it (%d given)", p->n_operands);
    int n = p->n_operands, status = 0, read = 0;
    ModelFile *models = xcalloc(n, sizeof(ModelFile));
    ModelFile **files = xmalloc(sizeof(ModelFile *) * n);
    Error err;
    for (; read < n && status == 0; read++) {
        /* Only decoding: a file with int8 weights read for int8 (unless float32 is asked). */
        status = (a->compute_type != COMPUTE_FLOAT32 ? modelfile_read_decoding : modelfile_read)(p->operands[read],
                                                                                                &models[read], &err);
        /* Prepared once, before the workers share the model read-only. */
        if (status == 0 && prepare_model(&models[read], p->operands[read], a->compute_type, &err)) {
            modelfile_free(&models[read]);
            status = -1;
        }
        if (status == 0) model_drop_prepared_floats(&models[read].model);  /* it only decodes */
        files[read] = &models[read];
    }
    if (status) read--;  /* the one that failed holds nothing */
    Shortlist shortlist = {0};
    if (status == 0 && a->shortlist_path) {
        const LineLimit limit = {0};
        if (model_classifies(&models[0].model.dims))
            status = error_set(&err, "serve: --shortlist %s: %s is a classifier, which has no output vocabulary to "
                                     "restrict", a->shortlist_path, p->operands[0]);
        else
            status = use_shortlist(a->shortlist_path, files, 1, &limit, &shortlist, &err);
    }
    Workers *workers = NULL;
    if (status == 0 && !(workers = command_workers(files, n, a->workers, a->threads, &err))) status = -1;
    if (status == 0) {
        if (!loopback(a->server.listen))
            fprintf(stderr, "nmt: note: serving on %s: other machines can reach it, and nmt serve asks no one "
                            "who they are\n", a->server.listen);
        fprintf(stderr, "nmt: serve: %d model%s, %d worker%s\n", n, n > 1 ? "s" : "", workers_count(workers),
                workers_count(workers) > 1 ? "s" : "");
        Engine *engine = engine_new(workers, p->operands, a->queue);
        Api api = {.engine = engine, .limits = a->limits, .wait_s = a->server.timeout_s};
        status = server_run(&api, &a->server, stdout, &err);
        engine_free(engine);
    }
    if (status) fail(&err);
    workers_free(workers);
    for (int i = 0; i < read; i++)
        modelfile_free(&models[i]);
    shortlist_free(&shortlist);
    free(files);
    free(models);
    return status ? 1 : 0;
}
