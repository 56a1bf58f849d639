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

/* The L2 norm of all n gradients (accumulated in double). */
double grad_norm(const float *grad, long n);
/* Clipping as torch.nn.utils.clip_grad_norm_: the factor max_norm / (norm + 1e-6) when
 * norm > max_norm, else 1; max_norm <= 0 disables. grad_clip applies it in place;
 * adam_update can apply it on the fly instead (one pass over the gradients less). */
float clip_scale(double norm, double max_norm);
void grad_clip(float *grad, long n, double norm, double max_norm);
/* One update of params (n) from grad_scale * grad (n); leaves grad zeroed for the
 * next step. (The optimizer is bound by memory bandwidth, not arithmetic: a second
 * thread made it no faster here, so it has none.) */
void adam_update(Adam *opt, float *params, float *grad, float grad_scale);
#endif
