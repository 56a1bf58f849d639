/* adam.h — the optimizer: global gradient-norm clipping and Adam (Kingma & Ba), as
 * torch.nn.utils.clip_grad_norm_ and torch.optim.Adam (no weight decay) compute them.
 */
#ifndef ADAM_H
#define ADAM_H

typedef struct {
    float lr, beta1, beta2, eps;
    long step;          /* updates done so far */
    long n;             /* parameters */
    float *m, *v;       /* first and second moment estimates, n each */
} Adam;

void adam_init(Adam *opt, long n, float lr);
void adam_free(Adam *opt);

/* The L2 norm of all n gradients: the float sums of squares of blocks of
 * GRAD_NORM_BLOCK gradients, added up in double in block order. */
double grad_norm(const float *grad, long n);
/* The same in parts, for threads (train/parallel.h): the sums of the blocks first ..
 * last-1 of grad (n) into sums[0 .. last-first-1], then grad_norm_of_blocks over all
 * (n + GRAD_NORM_BLOCK - 1) / GRAD_NORM_BLOCK of them, in order: grad_norm's bits,
 * however the blocks were shared out. */
#define GRAD_NORM_BLOCK 4096
void grad_norm_blocks(const float *grad, long n, long first, long last, float *sums);
double grad_norm_of_blocks(const float *sums, long blocks);
/* Clipping as torch.nn.utils.clip_grad_norm_: the factor max_norm / (norm + 1e-6) when
 * norm > max_norm, else 1; max_norm <= 0 disables. grad_clip applies it in place;
 * adam_update can apply it on the fly instead (one pass over the gradients less). */
float clip_scale(double norm, double max_norm);
void grad_clip(float *grad, long n, double norm, double max_norm);
/* One update of params (n) from grad_scale * grad (n); leaves grad zeroed for the
 * next step. */
void adam_update(Adam *opt, float *params, float *grad, float grad_scale);
/* The same in parts, for threads (train/parallel.h): adam_begin_update once (the step
 * count), then adam_update_range over ranges [lo, hi) that cover 0 .. n-1 once each, in
 * any order and at once: the update is element-wise, so the same bits as adam_update. */
void adam_begin_update(Adam *opt);
void adam_update_range(const Adam *opt, float *params, float *grad, float grad_scale, long lo, long hi);
#endif
