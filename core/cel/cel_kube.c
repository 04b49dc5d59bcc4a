/*
 * Kubernetes' quantity and semver libraries (k8s.io/apiserver/pkg/cel/library quantity.go,
 * semverlib.go at SemverVersion(1)): the functions, their overloads and their error texts.
 */
#include <stdio.h>
#include <string.h>

#include "cel/cel_lib.h"

ks_cel_value ks__cel_semver_from(ks_mempool *a, const ks_cel_value *s, bool normalize, bool test);
ks_cel_value ks__cel_kube_call(cel_ctx *c, int fn, const ks_cel_value *argv, size_t n,
                               bool *handled);

static ks_cel_value quantity_value(const ks_cel_quantity *q)
{
    ks_cel_value v = {.kind = KS_CEL_QUANTITY, .q = q};
    return v;
}

ks_cel_value ks__cel_kube_call(cel_ctx *c, int fn, const ks_cel_value *argv, size_t n,
                               bool *handled)
{
    *handled = true;
    ks_cel_value nso = ks__cel_err(c->a, "no such overload");
    switch (fn) {
    case FN_QUANTITY:
    case FN_ISQUANTITY: {
        if (n != 1 || argv[0].kind != KS_CEL_STRING)
            return nso;
        ks_cel_value q;
        int rc = ks__cel_quantity_parse(c->a, argv[0].s.ptr, argv[0].s.len, &q);
        if (fn == FN_ISQUANTITY)
            return ks_cel_bool(rc == 0);
        /* apimachinery's ErrFormatWrong and ErrSuffix */
        if (rc == 1)
            return ks__cel_err(c->a, "quantities must match the regular expression "
                                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        if (rc)
            return ks__cel_err(c->a, "unable to parse quantity's suffix");
        return q;
    }
    case FN_SEMVER:
    case FN_ISSEMVER:
        if (n < 1 || n > 2 || argv[0].kind != KS_CEL_STRING ||
            (n == 2 && argv[1].kind != KS_CEL_BOOL))
            return nso;
        return ks__cel_semver_from(c->a, &argv[0], n == 2 && argv[1].b, fn == FN_ISSEMVER);
    case FN_SIGN:
        if (n != 1 || argv[0].kind != KS_CEL_QUANTITY)
            return nso;
        return ks_cel_int(argv[0].q->ndigits ? (argv[0].q->neg ? -1 : 1) : 0);
    case FN_ISGT:
    case FN_ISLT:
    case FN_COMPARETO: {
        if (n != 2 || argv[0].kind != argv[1].kind)
            return nso;
        int r;
        if (argv[0].kind == KS_CEL_QUANTITY)
            r = ks__cel_quantity_cmp(argv[0].q, argv[1].q);
        else if (argv[0].kind == KS_CEL_SEMVER)
            r = ks__cel_semver_cmp(argv[0].sv, argv[1].sv);
        else
            return nso;
        if (fn == FN_COMPARETO)
            return ks_cel_int(r);
        return ks_cel_bool(fn == FN_ISGT ? r == 1 : r == -1);
    }
    case FN_QADD:
    case FN_QSUB: {
        if (n != 2 || argv[0].kind != KS_CEL_QUANTITY)
            return nso;
        const ks_cel_quantity *y;
        if (argv[1].kind == KS_CEL_QUANTITY)
            y = argv[1].q;
        else if (argv[1].kind == KS_CEL_INT)
            y = ks__cel_quantity_from_int(c->a, argv[1].i);
        else
            return nso;
        ks_cel_quantity *r = ks__cel_quantity_add(c->a, argv[0].q, y, fn == FN_QSUB);
        if (!r)
            return ks__cel_err(c->a, "quantity arithmetic: exponents too far apart to add exactly");
        r->boxed = true;
        return quantity_value(r);
    }
    case FN_ASINT:
    case FN_ISINT: {
        if (n != 1 || argv[0].kind != KS_CEL_QUANTITY)
            return nso;
        int64_t v = 0;
        bool is_int;
        bool ok = ks__cel_quantity_as_int(argv[0].q, &v, &is_int);
        if (fn == FN_ISINT)
            return ks_cel_bool(ok);
        if (!ok)
            return ks__cel_err(c->a, "cannot convert value to integer");
        return ks_cel_int(v);
    }
    case FN_ASFLOAT: {
        if (n != 1 || argv[0].kind != KS_CEL_QUANTITY)
            return nso;
        ks_cel_value d = {.kind = KS_CEL_DOUBLE, .d = ks__cel_quantity_as_double(argv[0].q)};
        return d;
    }
    case FN_MAJOR:
    case FN_MINOR:
    case FN_PATCH: {
        if (n != 1 || argv[0].kind != KS_CEL_SEMVER)
            return nso;
        const ks_cel_semver *v = argv[0].sv;
        return ks_cel_int((int64_t)(fn == FN_MAJOR   ? v->major
                                    : fn == FN_MINOR ? v->minor
                                                     : v->patch));
    }
    default:
        *handled = false;
        return nso;
    }
}
