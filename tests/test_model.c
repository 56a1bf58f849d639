/* test_model.c — the whole model against the PyTorch reference (scripts/reference/reference.py):
 * activations, loss, every gradient, and one clipped Adam step, from
 * tests/fixtures/reference.bin. */
#include <string.h>

#include "layers/adam.h"
#include "check.h"
#include "fixture.h"
#include "models/model.h"

int main(void)
{
    Fixture f = fixture_load("tests/fixtures/reference.bin");
    int *dims = fixture_get(&f, "dims")->data;
    int B = dims[0], S = dims[1], T = dims[2];
    ModelDims d = {.embed = dims[3], .hidden = dims[4], .src_vocab = dims[5], .tgt_vocab = dims[6]};
    int H = d.hidden;

    Model m;
    model_alloc(&m, &d);
    TensorShape shapes[MAX_TENSORS];
    float *params[MAX_TENSORS], *grads[MAX_TENSORS];
    int n_t = params_shapes(&m.dims, shapes);
    CHECK(n_t == 16, "the base model has 16 tensors");
    params_tensors(&m.params, &m.dims, params);
    params_tensors(&m.grads, &m.dims, grads);
    for (int i = 0; i < n_t; i++) {
        FixtureTensor *t = fixture_get(&f, shapes[i].name);
        CHECK(t->n == shapes[i].rows * shapes[i].cols, shapes[i].name);
        memcpy(params[i], t->data, sizeof(float) * t->n);
    }

    Batch batch = {0};
    batch.B = B;
    batch.S = S;
    batch.T = T;
    batch.cap = (S > T ? S : T) * B;
    batch.src = fixture_get(&f, "src")->data;
    batch.tgt_in = fixture_get(&f, "tgt_in")->data;
    batch.tgt_out = fixture_get(&f, "tgt_out")->data;
    float mask[64];
    for (int i = 0; i < S * B; i++)
        mask[i] = batch.src[i] != 0;
    batch.mask = mask;
    for (int i = 0; i < T * B; i++)
        batch.n_tokens += batch.tgt_out[i] != 0;

    RunState rs;
    runstate_alloc(&rs, &d, RUN_TRAIN, B, S, T);
    /* Forward without gradients first, to compare the logits themselves. */
    double loss = model_forward(&m, &rs, &batch, 0) / batch.n_tokens;
    check_close(model_memory(&m, &rs), fixture_get(&f, "enc_states")->data, (long)S * B * H, 1e-5, "encoder states");
    check_close(rs.attn, fixture_get(&f, "attn")->data, (long)T * B * S, 1e-5, "attention weights");
    check_close(rs.logits, fixture_get(&f, "logits")->data, (long)T * B * d.tgt_vocab, 1e-5, "logits");
    float lossf = (float)loss;
    check_close(&lossf, fixture_get(&f, "loss")->data, 1, 1e-6, "loss");

    model_zero_grad(&m);
    double loss2 = model_forward(&m, &rs, &batch, 1) / batch.n_tokens;
    CHECK(loss2 == loss, "forward with gradients gives the same loss");
    model_backward(&m, &rs, &batch);
    char name[80];
    for (int i = 0; i < n_t; i++) {
        snprintf(name, sizeof name, "grad.%.47s", shapes[i].name);
        check_close_scaled(grads[i], fixture_get(&f, name)->data, shapes[i].rows * shapes[i].cols, 2e-5, name);
    }

    double norm = grad_norm(m.grad_mem, m.n_params);
    float normf = (float)norm;
    check_close(&normf, fixture_get(&f, "grad_norm")->data, 1, 1e-6, "gradient norm");
    float clip = *(float *)fixture_get(&f, "clip")->data, lr = *(float *)fixture_get(&f, "lr")->data;
    grad_clip(m.grad_mem, m.n_params, norm, clip);
    CHECK(fabs(grad_norm(m.grad_mem, m.n_params) - clip) < 1e-5 * clip, "clipping leaves the norm at clip");
    Adam opt;
    adam_init(&opt, m.n_params, lr);
    adam_update(&opt, m.param_mem, m.grad_mem, 1.0f);
    for (int i = 0; i < n_t; i++) {
        long n = shapes[i].rows * shapes[i].cols, off = params[i] - m.param_mem;
        snprintf(name, sizeof name, "adam.%.47s", shapes[i].name);
        check_close(params[i], fixture_get(&f, name)->data, n, 1e-5, name);
        snprintf(name, sizeof name, "adam_m.%.47s", shapes[i].name);
        check_close_scaled(opt.m + off, fixture_get(&f, name)->data, n, 2e-5, name);
    }

    adam_free(&opt);
    runstate_free(&rs);
    model_free(&m);
    fixture_free(&f);
    return check_report("test_model");
}
