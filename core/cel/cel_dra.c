/*
 * DRA's CEL environment (k8s.io/dynamic-resource-allocation/cel compile.go at v0.37.2): the
 * "device" variable built as DeviceMatches builds it, and the boolean result it requires.
 */
#include <stdio.h>
#include <string.h>

#include "cel/cel_internal.h"

static const char *const dra_vars[] = {"device"};

const ks_cel_env ks_cel_dra_env = {
    .vars = dra_vars, .nvars = 1, .cost_limit = KS_CEL_DRA_COST_LIMIT, .dra_device = true};

static ks_cel_value str_of(ks_mempool *a, const char *s, size_t n)
{
    return ks__cel_str(a, s, n, KS_CEL_STRING);
}

/* {domain: {id: value}} from qualified names (parseQualifiedName: "domain/id", else the driver's
 * domain). A later entry for the same id replaces an earlier one, as a Go map assignment does. */
static ks_cel_value group(ks_mempool *a, const char *driver, const ks_cel_dra_entry *e, size_t n)
{
    ks_cel_value *dkeys = ks__mempool_alloc(a, sizeof(ks_cel_value) * (n ? n : 1));
    ks_cel_value *dvals = ks__mempool_alloc(a, sizeof(ks_cel_value) * (n ? n : 1));
    ks_cel_map *inner = ks__mempool_alloc(a, sizeof(ks_cel_map) * (n ? n : 1));
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        const char *slash = strchr(e[i].name, '/');
        ks_cel_value dom = slash ? str_of(a, e[i].name, (size_t)(slash - e[i].name))
                                 : str_of(a, driver, strlen(driver));
        const char *id = slash ? slash + 1 : e[i].name;
        size_t d;
        for (d = 0; d < nd; d++)
            if (ks_cel_equal(&dkeys[d], &dom))
                break;
        if (d == nd) {
            dkeys[nd] = dom;
            inner[nd].keys = ks__mempool_alloc(a, sizeof(ks_cel_value) * n);
            inner[nd].vals = ks__mempool_alloc(a, sizeof(ks_cel_value) * n);
            inner[nd].n = 0;
            dvals[nd].kind = KS_CEL_MAP;
            dvals[nd].map = &inner[nd];
            nd++;
        }
        ks_cel_map *m = &inner[d];
        ks_cel_value key = str_of(a, id, strlen(id));
        size_t k;
        for (k = 0; k < m->n; k++)
            if (ks_cel_equal(&m->keys[k], &key))
                break;
        ((ks_cel_value *)m->keys)[k] = key;
        ((ks_cel_value *)m->vals)[k] = e[i].value;
        if (k == m->n)
            m->n++;
    }
    ks_cel_map *outer = ks__mempool_alloc(a, sizeof *outer);
    outer->n = nd;
    outer->keys = dkeys;
    outer->vals = dvals;
    outer->missing_is_empty = true;
    ks_cel_value v = {.kind = KS_CEL_MAP, .map = outer};
    return v;
}

ks_cel_value ks_cel_dra_device(ks_mempool *a, const char *driver, const ks_cel_dra_entry *attrs,
                               size_t nattrs, const ks_cel_dra_entry *capacity, size_t ncapacity,
                               bool allow_multiple_allocations)
{
    ks_cel_value *keys = ks__mempool_alloc(a, sizeof(ks_cel_value) * 4);
    ks_cel_value *vals = ks__mempool_alloc(a, sizeof(ks_cel_value) * 4);
    keys[0] = str_of(a, "driver", 6);
    vals[0] = str_of(a, driver, strlen(driver));
    keys[1] = str_of(a, "allowMultipleAllocations", 24);
    vals[1] = ks_cel_bool(allow_multiple_allocations);
    keys[2] = str_of(a, "attributes", 10);
    vals[2] = group(a, driver, attrs, nattrs);
    keys[3] = str_of(a, "capacity", 8);
    vals[3] = group(a, driver, capacity, ncapacity);
    ks_cel_map *m = ks__mempool_alloc(a, sizeof *m);
    m->n = 4;
    m->keys = keys;
    m->vals = vals;
    ks_cel_value v = {.kind = KS_CEL_MAP, .map = m};
    return v;
}

int ks_cel_dra_matches(const ks_cel_program *p, const ks_cel_value *device, ks_mempool *arena,
                       bool *match, uint64_t *cost, ks_cel_error *err)
{
    ks_cel_binding b = {.name = "device", .value = *device};
    ks_cel_value v;
    if (ks_cel_eval(p, &b, 1, arena, &v, cost, err) != 0)
        return -1;
    if (v.kind != KS_CEL_BOOL) {
        memset(err, 0, sizeof *err);
        snprintf(err->msg, sizeof err->msg,
                 "CEL result of type %s could not be converted to bool: unsupported native "
                 "conversion from %s to "
                 "'bool'",
                 ks__cel_type_name(&v), ks__cel_type_name(&v));
        return -1;
    }
    *match = v.b;
    return 0;
}
