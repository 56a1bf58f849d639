/* api.c — nmt serve's endpoints (api.h). */
#include "serve/api.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "files/info.h"  /* defines: info_json */
#include "serve/page.h"  /* defines: serve_page */

static const char json_type[] = "application/json; charset=utf-8";

/* Hands o, printed, to the reply (and deletes it). */
static void reply_json(Reply *reply, int status, cJSON *o)
{
    reply->status = status;
    reply->type = json_type;
    reply->body = cJSON_PrintUnformatted(o);
    if (!reply->body) {  /* cJSON could not allocate: the one answer left */
        reply->body = xstrdup("{\"error\": \"out of memory\"}");
        reply->status = 500;
    }
    reply->len = strlen(reply->body);
    cJSON_Delete(o);
}

void api_error(Reply *reply, int status, const char *message)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", message);
    reply_json(reply, status, o);
}

void reply_free(Reply *reply)
{
    if (!reply->fixed) free(reply->body);
    reply->body = NULL;
}

static void health(const Api *api, Reply *reply)
{
    int workers, busy, waiting;
    engine_load(api->engine, &workers, &busy, &waiting);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", "ok");
    cJSON_AddNumberToObject(o, "models", engine_models(api->engine));
    cJSON_AddNumberToObject(o, "workers", workers);
    cJSON_AddNumberToObject(o, "busy", busy);
    cJSON_AddNumberToObject(o, "waiting", waiting);
    reply_json(reply, 200, o);
}

static void models(const Api *api, Reply *reply)
{
    cJSON *o = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(o, "models");
    for (int i = 0; i < engine_models(api->engine); i++) {
        const ModelFile *mf = engine_model_file(api->engine, i);
        const char *name = engine_model_name(api->engine, i);
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", name);
        cJSON_AddStringToObject(m, "task", model_classifies(&mf->model.dims) ? "classify" : "translate");
        cJSON_AddItemToObject(m, "info", info_json(name, mf));
        cJSON_AddItemToArray(list, m);
    }
    cJSON_AddBoolToObject(o, "ensemble", engine_models(api->engine) > 1 && engine_can_ensemble(api->engine));
    reply_json(reply, 200, o);
}

/* POST /translate and /classify: the body read (request.c), the work done on a worker. */
static void work(const Api *api, int classify, const char *body, size_t len, Reply *reply)
{
    Request r;
    char msg[512];
    int status = request_parse(body ? body : "", len, classify, api->engine, &api->limits, &r, msg, sizeof msg);
    if (status != REQUEST_OK) {
        api_error(reply, status, msg);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", engine_model_name(api->engine, r.model));
    cJSON *out = cJSON_AddArrayToObject(o, classify ? "classifications" : "translations");
    double deadline = now_seconds() + api->wait_s;
    EngineStatus s = classify ? engine_classify(api->engine, r.model, r.lines, r.n, r.batch, r.attention, deadline, out)
                              : engine_translate(api->engine, r.lines, r.n, &r.opt, deadline, out);
    reply->lines = r.n;
    request_free(&r);
    if (s == ENGINE_DONE) {
        reply_json(reply, 200, o);
        return;
    }
    cJSON_Delete(o);
    reply->lines = 0;
    api_error(reply, 503, s == ENGINE_BUSY ? "too many requests are waiting for a worker: try again shortly"
                                           : "no worker came free within the time limit: try again shortly");
    reply->retry_after = 1;
}

/* The paths and the method each takes. */
typedef enum { ROUTE_PAGE, ROUTE_HEALTH, ROUTE_MODELS, ROUTE_TRANSLATE, ROUTE_CLASSIFY } Route;
static const struct {
    const char *path, *method;
    Route route;
} routes[] = {
    {"/", "GET", ROUTE_PAGE},
    {"/health", "GET", ROUTE_HEALTH},
    {"/models", "GET", ROUTE_MODELS},
    {"/translate", "POST", ROUTE_TRANSLATE},
    {"/classify", "POST", ROUTE_CLASSIFY},
};

void api_respond(const Api *api, const char *method, const char *path, const char *body, size_t len, Reply *reply)
{
    *reply = (Reply){0};
    size_t r = 0, n = sizeof routes / sizeof routes[0];
    while (r < n && strcmp(routes[r].path, path))
        r++;
    if (r == n) {
        char msg[300];
        snprintf(msg, sizeof msg, "no such endpoint: %.200s (GET /, /health, /models; POST /translate, /classify)", path);
        api_error(reply, 404, msg);
        return;
    }
    /* HEAD is GET without the body, which http.c leaves out. */
    int get = !strcmp(routes[r].method, "GET");
    if (strcmp(method, routes[r].method) && !(get && !strcmp(method, "HEAD"))) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s takes %s%s", routes[r].path, routes[r].method, get ? " (or HEAD)" : "");
        api_error(reply, 405, msg);
        reply->allow = get ? "GET, HEAD" : "POST";
        return;
    }
    switch (routes[r].route) {
    case ROUTE_PAGE:
        *reply = (Reply){.status = 200, .type = "text/html; charset=utf-8", .body = (char *)serve_page,
                         .len = serve_page_len, .fixed = 1};
        break;
    case ROUTE_HEALTH: health(api, reply); break;
    case ROUTE_MODELS: models(api, reply); break;
    case ROUTE_TRANSLATE: work(api, 0, body, len, reply); break;
    case ROUTE_CLASSIFY: work(api, 1, body, len, reply); break;
    }
}
