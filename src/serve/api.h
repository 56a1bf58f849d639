/* api.h — nmt serve's endpoints: a request's method, path and whole body in, the
 * status, type and body of the answer out. No sockets here (http.c carries the bytes),
 * so every endpoint can be called, and tested, as a function.
 *
 *   GET  /            the page (page.html): a source box, translations, n-best lists,
 *                     scores and the attention heatmaps, self-contained
 *   GET  /health      200 {"status": "ok", "models": M, "workers": N, "busy": B,
 *                     "waiting": W}
 *   GET  /models      200 {"models": [{"name": NAME, "task": "translate" | "classify",
 *                     "info": the object `nmt info --json NAME` prints}, ...],
 *                     "ensemble": whether "ensemble": true works}
 *   POST /translate   200 {"model": NAME, "translations": [one object per line:
 *                     engine.h's engine_translate]} (request.h: the body)
 *   POST /classify    200 {"model": NAME, "classifications": [one per line:
 *                     engine_classify]}
 *
 * Errors are JSON too, {"error": "what is wrong"}: 400 a body that is not a request
 * (request.h), 404 another path, 405 another method (with Allow), 413 too many lines
 * (http.c answers 413 for too many bytes), 503 when max_waiting requests already wait
 * for a worker or none came free within the time limit (with Retry-After).
 */
#ifndef API_H
#define API_H

#include <stddef.h>

#include "serve/engine.h"  /* defines: Engine */
#include "serve/request.h" /* defines: RequestLimits */

typedef struct {
    Engine *engine;
    RequestLimits limits;
    double wait_s;         /* the longest a request waits for a worker */
} Api;

/* An answer: status, Content-Type, and body (malloc'd, or static when `fixed`). */
typedef struct {
    int status;
    const char *type;
    char *body;
    size_t len;
    int fixed;             /* body is static (the page): not freed */
    const char *allow;     /* 405: the methods the path takes */
    int retry_after;       /* 503: seconds to wait before trying again (0: none) */
    int lines;             /* lines translated or classified, for the access log */
} Reply;

/* The answer to method path with body[0..len) (NULL, 0 without one). */
void api_respond(const Api *api, const char *method, const char *path, const char *body, size_t len, Reply *reply);
/* A JSON {"error": message} answer with status. */
void api_error(Reply *reply, int status, const char *message);
void reply_free(Reply *reply);
#endif
