/* Workload parameters: defaults, --quick sizes and --param KEY=VALUE. */
#ifndef HEAPLAB_PARAMS_H
#define HEAPLAB_PARAMS_H

#include <stddef.h>

#include "workload.h"

/* How many parameters w declares (up to the {NULL} entry). */
int params_count(const workload *w);

/* The value a parameter takes under --quick (its quick size, or its
 * default when quick is 0). */
long long params_quick_value(const wl_param_def *p);

/* A parameter with named values (p->names): the value `text` names, or -1
 * when it names none (or the parameter has no names). */
long long params_named_value(const wl_param_def *p, const char *text);

/* The name of `value` for a parameter with named values, else NULL. */
const char *params_value_name(const wl_param_def *p, long long value);

/* Fills values[i] for each declared parameter: the default (or quick size),
 * then each "KEY=VALUE" in order. An unknown name, a value that is not an
 * integer (nor, for a parameter with named values, one of
 * its names), or one outside [min, max] is a one-line error naming the
 * parameter and its range; so is a pair min_X, max_X whose min is above its
 * max. Returns 0 or -1. */
int params_resolve(const workload *w, int quick, const char *const *assignments,
                   int assignment_count, long long *values, char *err, size_t errlen);

#endif
