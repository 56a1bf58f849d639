/* request.h — a POST /translate or /classify body, read from JSON and checked: the
 * lines, the model, and the options, the one place where a request's keys become
 * decode/'s per-call TranslateOptions.
 *
 * POST /translate (every key but "text" may be left out):
 *   {"text": "a line" | ["a line", ...],
 *    "model": "NAME",            a served model, as GET /models names it (default: the first
 *                                translation model)
 *    "ensemble": true,           all the served models together (nmt translate --models)
 *    "beam": K, "nbest": N, "length_penalty": A | "avg", "max_len": N, "batch": N,
 *    "attention": true,          each line's tokens and attention matrix
 *    "heads": true, "layer": N,  a Transformer's: each head's map, and the decoder layer
 *    "replace_unk": true}
 * Each option is `nmt translate`'s of the same name (--beam, --nbest, --length-penalty,
 * --max-len, --batch, --align-layer, --attention-heads, --replace-unk), with the same
 * range and default, except batch: the server's --batch. The table in request.c
 * (translate_keys) maps them: a new option of TranslateOptions is one row there.
 *
 * POST /classify: {"text": ..., "model": "NAME", "attention": true, "batch": N}.
 *
 * A body that is not a JSON object, an unknown key, a value of the wrong type or out of
 * range, a line that is not UTF-8 or holds a line break, an option the model does not
 * have (heads for a recurrent model), more lines than the limit: the request is refused
 * with a message naming the key (400, or 413 for too many lines).
 */
#ifndef REQUEST_H
#define REQUEST_H

#include <stddef.h>

#include "decode/translate.h" /* defines: TranslateOptions */
#include "serve/engine.h"     /* defines: Engine */

typedef struct {
    char **lines;          /* (n) each malloc'd, valid UTF-8, no line break */
    int n;
    int model;             /* the engine's model index */
    TranslateOptions opt;  /* /translate's */
    int batch, attention;  /* /classify's */
} Request;

/* What a request may be at most, and what it gets when it does not say. */
typedef struct {
    int max_lines;         /* lines in one request (more: 413) */
    int batch;             /* the default "batch" */
} RequestLimits;

/* The body's outcome: REQUEST_OK, or the HTTP status to refuse it with (msg says why). */
enum { REQUEST_OK = 0, REQUEST_BAD = 400, REQUEST_TOO_LARGE = 413 };

/* Reads body[0..len) as a request for /translate (classify 0) or /classify (1) against
 * the engine's models. Returns REQUEST_OK with *r filled (request_free frees it), or
 * REQUEST_BAD / REQUEST_TOO_LARGE with a message in msg[msg_len]. */
int request_parse(const char *body, size_t len, int classify, const Engine *e, const RequestLimits *limits,
                  Request *r, char *msg, size_t msg_len);
void request_free(Request *r);
#endif
