/* Numbers in scripts: literals with K/M/G suffixes, or $PARAM references. */
#include <stdio.h>
#include <string.h>

#include "script_internal.h"

int sc_parse_num(const char *s, const wl_param_def *params, int nparams, sc_num *out,
                 char *err, size_t errlen)
{
    out->lit = 0;
    out->param = -1;
    out->val = 0;
    if (s[0] != '$')
        return sc_parse_size(s, &out->lit, err, errlen);
    for (int i = 0; i < nparams; i++) {
        if (strcmp(params[i].name, s + 1) == 0) {
            out->param = i;
            return 0;
        }
    }
    if (nparams == 0) {
        snprintf(err, errlen, "undefined parameter %s (no 'param' lines declared)", s);
        return -1;
    }
    size_t used = (size_t)snprintf(err, errlen, "undefined parameter %s (declared:", s);
    for (int i = 0; i < nparams && used < errlen; i++)
        used += (size_t)snprintf(err + used, errlen - used, " $%s", params[i].name);
    if (used < errlen)
        snprintf(err + used, errlen - used, ")");
    return -1;
}
