/* registry.c — which model families nmt has: model.type's number and name to the
 * family's table of operations (model.h declares the lookups, since model.c dispatches
 * through them; a header of the registry's own would make the includes loop).
 *
 * Adding a family, or a variant of one (issue 31's int8 decoding), is a ModelType
 * (model.h), a row here, and the family's own files: no generic code changes. */
#include "models/model.h"

#include <string.h>

#include "models/classifier.h"  /* defines: classifier_family */
#include "models/rnn.h"         /* defines: rnn_family */
#include "models/transformer.h" /* defines: transformer_family */

/* In ModelType order: row k is the family of type k. */
static const ModelFamily *const families[MODEL_TYPES] = {
    [MODEL_RNN] = &rnn_family,
    [MODEL_TRANSFORMER] = &transformer_family,
    [MODEL_CLASSIFIER] = &classifier_family,
};

const ModelFamily *model_family(const ModelDims *d)
{
    return d->type >= 0 && d->type < MODEL_TYPES ? families[d->type] : NULL;
}

const ModelFamily *model_family_named(const char *name)
{
    for (int k = 0; k < MODEL_TYPES; k++)
        if (!strcmp(families[k]->name, name)) return families[k];
    return NULL;
}

const ModelFamily *const *model_families(int *n)
{
    *n = MODEL_TYPES;
    return families;
}

int model_classifies(const ModelDims *d)
{
    const ModelFamily *f = model_family(d);
    return f && f->task == MODEL_CLASSIFIES;
}
