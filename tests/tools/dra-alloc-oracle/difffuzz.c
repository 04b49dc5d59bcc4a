/*
 * Differential fuzzing of the structured DRA allocator (core/sched/dra_allocator.c) against
 * upstream's (tests/tools/dra-alloc-oracle: structured.NewAllocator of
 * k8s.io/dynamic-resource-allocation v0.37.2, through a pipe). Random ResourceSlices (pools of
 * several slices, node selection of every kind, shared counters, consumable capacity, taints,
 * binding conditions), DeviceClasses and ResourceClaims (ExactCount, All, prioritized lists,
 * selectors, admin access, tolerations, capacity requests, constraints, configs), an allocated
 * state, a node and a feature set; both sides allocate and render the outcome the same way
 * (allocated devices in order, node selector, configs; or the error text), which must be equal.
 *
 *   dra_alloc_difffuzz ORACLE_BINARY CASES SEED     exit 1 on any disagreement, printing the cases
 *   (DRA_DIFFFUZZ_VERBOSE=1: also print every agreed outcome)
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/dra_objects.h"
#include "api/objects.h"
#include "api/quantity.h"
#include "sched/dra_allocator.h"
#include "sched/host_api.h"

/* ---- a tiny deterministic PRNG (xorshift64*) ------------------------------------------------ */

static uint64_t rng;
static unsigned rnd(unsigned n)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (unsigned)((rng * 2685821657736338717ULL) >> 33) % n;
}
static int chance(unsigned percent) { return rnd(100) < percent; }
static const char *pick(const char *const *v, size_t n) { return v[rnd((unsigned)n)]; }
#define PICK(arr) pick(arr, sizeof arr / sizeof arr[0])

/* ---- case generation ------------------------------------------------------------------------ */

static cJSON *str(const char *s) { return cJSON_CreateString(s); }
static cJSON *obj(void) { return cJSON_CreateObject(); }
static void add(cJSON *o, const char *k, cJSON *v) { cJSON_AddItemToObject(o, k, v); }
static void push(cJSON *a, cJSON *v) { cJSON_AddItemToArray(a, v); }
static cJSON *meta(const char *name, const char *ns)
{
    cJSON *m = obj();
    add(m, "name", str(name));
    if (ns)
        add(m, "namespace", str(ns));
    return m;
}
static cJSON *typed(const char *api, const char *kind, const char *name, const char *ns)
{
    cJSON *o = obj();
    add(o, "apiVersion", str(api));
    add(o, "kind", str(kind));
    add(o, "metadata", meta(name, ns));
    return o;
}
static cJSON *qty(const char *v)
{
    cJSON *o = obj();
    add(o, "value", str(v));
    return o;
}
static cJSON *node_selector(const char *key, const char *value)
{
    cJSON *ns = obj(), *terms = cJSON_CreateArray(), *t = obj(), *ex = cJSON_CreateArray(),
          *r = obj(), *vals = cJSON_CreateArray();
    add(r, "key", str(key));
    add(r, "operator", str("In"));
    push(vals, str(value));
    add(r, "values", vals);
    push(ex, r);
    add(t, "matchExpressions", ex);
    push(terms, t);
    add(ns, "nodeSelectorTerms", terms);
    return ns;
}

/* Where a slice (or, with perDeviceNodeSelection, a device) is reachable from. */
static void place(cJSON *o, int allow_per_device)
{
    unsigned r = rnd(100);
    if (r < 50)
        add(o, "nodeName", str("node-1"));
    else if (r < 62)
        add(o, "nodeName", str("node-2"));
    else if (r < 77)
        add(o, "allNodes", cJSON_CreateTrue());
    else if (r < 90 || !allow_per_device)
        add(o, "nodeSelector", node_selector("region", chance(70) ? "region-1" : "region-2"));
    else
        add(o, "perDeviceNodeSelection", cJSON_CreateTrue());
}

typedef struct gen {
    cJSON *slices, *devices_seen; /* devices_seen: "driver/pool/device" strings, multi flag */
    char ids[256][64];
    int multi[256];
    int nids;
} gen;

static cJSON *device(gen *g, const char *driver, const char *pool, const char *name, int per_device,
                     int counters)
{
    cJSON *d = obj();
    add(d, "name", str(name));
    cJSON *attrs = obj();
    if (chance(80)) {
        cJSON *a = obj();
        add(a, "int", cJSON_CreateNumber(rnd(2)));
        add(attrs, chance(80) ? "numa" : "resource.kubernetes.io/numa", a);
    }
    if (chance(70)) {
        cJSON *a = obj();
        add(a, "string", str(chance(50) ? "a" : "b"));
        add(attrs, "model", a);
    }
    if (chance(40)) {
        cJSON *a = obj();
        add(a, "version", str(chance(50) ? "1.0.0" : "2.0.0"));
        add(attrs, "dv", a);
    }
    add(d, "attributes", attrs);
    cJSON *caps = obj();
    if (chance(60))
        add(caps, "memory", qty(PICK(((const char *[]){"1Gi", "2Gi", "4Gi", "1536Mi"}))));
    int multi = chance(20);
    if (multi || chance(10)) {
        cJSON *c = qty(PICK(((const char *[]){"4", "2", "1500m"})));
        unsigned p = rnd(4);
        if (p == 1) {
            cJSON *pol = obj(), *range = obj();
            add(pol, "default", str("1"));
            add(range, "min", str("1"));
            add(range, "step", str(chance(50) ? "1" : "500m"));
            add(range, "max", str("4"));
            add(pol, "validRange", range);
            add(c, "requestPolicy", pol);
        } else if (p == 2) {
            cJSON *pol = obj(), *vals = cJSON_CreateArray();
            add(pol, "default", str("1"));
            push(vals, str("1"));
            push(vals, str("2"));
            push(vals, str("4"));
            add(pol, "validValues", vals);
            add(c, "requestPolicy", pol);
        }
        add(caps, "cap", c);
    }
    add(d, "capacity", caps);
    if (multi)
        add(d, "allowMultipleAllocations", cJSON_CreateTrue());
    if (chance(15)) {
        cJSON *ts = cJSON_CreateArray(), *t = obj();
        unsigned k = rnd(3);
        add(t, "key", str(k == 1 ? "k2" : "k1"));
        add(t, "value", str(k == 1 ? "v2" : "v1"));
        add(t, "effect", str(k == 0 ? "NoSchedule" : k == 1 ? "NoExecute" : "None"));
        push(ts, t);
        add(d, "taints", ts);
    }
    if (chance(8)) {
        cJSON *bc = cJSON_CreateArray(), *bf = cJSON_CreateArray();
        push(bc, str("ready"));
        push(bf, str("failed"));
        add(d, "bindingConditions", bc);
        add(d, "bindingFailureConditions", bf);
    }
    if (chance(5))
        add(d, "bindsToNode", cJSON_CreateTrue());
    if (counters) {
        cJSON *cc = cJSON_CreateArray(), *c = obj(), *cs = obj();
        add(c, "counterSet", str("cs-1"));
        add(cs, "mem", qty(PICK(((const char *[]){"1", "2", "3"}))));
        add(c, "counters", cs);
        push(cc, c);
        add(d, "consumesCounters", cc);
    }
    if (per_device)
        place(d, 0);
    if (g->nids < 256) {
        snprintf(g->ids[g->nids], sizeof g->ids[0], "%s/%s/%s", driver, pool, name);
        g->multi[g->nids++] = multi;
    }
    return d;
}

static void gen_slices(gen *g)
{
    int npools = 1 + (int)rnd(3), k = 0;
    for (int p = 0; p < npools; p++) {
        const char *driver = chance(70) ? "driver-a" : "driver-b";
        char pool[32];
        /* mostly a pool of its own; sometimes one that shares its name with another */
        snprintf(pool, sizeof pool, "pool-%d", chance(85) ? p + 1 : 1 + (int)rnd(2));
        int gen_no = chance(10) ? 2 : 1;
        int nslices = 1 + (int)rnd(2), counters = chance(25);
        int total = nslices + counters;
        int count = chance(90) ? total : total + 1;
        int where = -1; /* all slices of a pool on the same node mostly */
        for (int s = 0; s < total; s++) {
            char name[32];
            snprintf(name, sizeof name, "slice-%c%d", 'a' + (char)rnd(4), k++);
            cJSON *o = typed("resource.k8s.io/v1", "ResourceSlice", name, NULL), *spec = obj(),
                  *po = obj();
            add(spec, "driver", str(driver));
            add(po, "name", str(pool));
            add(po, "generation", cJSON_CreateNumber(s == 0 && chance(5) ? 1 : gen_no));
            add(po, "resourceSliceCount", cJSON_CreateNumber(count));
            add(spec, "pool", po);
            if (where < 0 || chance(20))
                place(spec, 1);
            else
                add(spec, "nodeName", str("node-1"));
            where = 1;
            int per_device = cJSON_GetObjectItem(spec, "perDeviceNodeSelection") != NULL;
            if (s == nslices) { /* the counter set slice */
                cJSON *sc = cJSON_CreateArray(), *c = obj(), *cs = obj();
                add(c, "name", str("cs-1"));
                add(cs, "mem", qty(PICK(((const char *[]){"4", "3", "6"}))));
                add(c, "counters", cs);
                push(sc, c);
                add(spec, "sharedCounters", sc);
                if (per_device) { /* counter-set slices carry no devices to place */
                    cJSON_DeleteItemFromObject(spec, "perDeviceNodeSelection");
                    add(spec, "nodeName", str("node-1"));
                }
            } else {
                cJSON *devs = cJSON_CreateArray();
                int nd = (int)rnd(7);
                for (int d = 0; d < nd; d++) {
                    char dn[32];
                    if (chance(4))
                        snprintf(dn, sizeof dn, "device-0");
                    else
                        snprintf(dn, sizeof dn, "d%d-%d", s, d);
                    push(devs, device(g, driver, pool, dn, per_device, counters && chance(80)));
                }
                add(spec, "devices", devs);
            }
            add(o, "spec", spec);
            push(g->slices, o);
        }
    }
}

static cJSON *selectors(void)
{
    static const char *const exprs[] = {
        "device.attributes[device.driver].?numa.orValue(-1) == 0",
        "device.attributes[device.driver].?model.orValue(\"\") == \"a\"",
        "device.capacity[device.driver].?memory.orValue(quantity(\"0\")).compareTo(quantity("
        "\"2Gi\")) >= 0",
        "device.allowMultipleAllocations",
        "!device.allowMultipleAllocations",
        "device.attributes[device.driver].?dv.orValue(semver(\"0.0.1\")).isGreaterThan(semver("
        "\"1.5.0\"))",
        "device.attributes[device.driver].numa == 1", /* a runtime error where numa is absent */
        "noSuchVar == 1", /* compile errors (core/cel words syntax errors differently: none) */
        "device.driver == \"é\" ||\n\t\"é\" == noSuchVar",
    };
    cJSON *a = cJSON_CreateArray(), *s = obj(), *c = obj();
    unsigned i = rnd(sizeof exprs / sizeof exprs[0]);
    if (i >= 6 && !chance(i == 6 ? 20 : 5)) /* the error cases, rarely */
        i = 0;
    add(c, "expression", str(exprs[i]));
    add(s, "cel", c);
    push(a, s);
    return a;
}

static cJSON *exact(const char *name, int sub)
{
    cJSON *e = obj();
    if (sub)
        add(e, "name", str(name));
    add(e, "deviceClassName",
        str(rnd(300) == 0 ? "class-none"
            : chance(50)  ? "class-a"
                          : PICK(((const char *[]){"class-b", "class-any"}))));
    if (chance(8)) {
        add(e, "allocationMode", str("All"));
    } else {
        add(e, "allocationMode", str("ExactCount"));
        add(e, "count", cJSON_CreateNumber(chance(70) ? 1 : chance(80) ? 2 : 3));
    }
    if (chance(35))
        add(e, "selectors", selectors());
    if (!sub && chance(10))
        add(e, "adminAccess", cJSON_CreateTrue());
    if (chance(25)) {
        cJSON *ts = cJSON_CreateArray(), *t = obj();
        if (chance(50)) {
            add(t, "key", str("k1"));
            add(t, "operator", str("Exists"));
            add(t, "effect", str("NoSchedule"));
        } else {
            add(t, "key", str("k2"));
            add(t, "operator", str("Equal"));
            add(t, "value", str("v2"));
        }
        push(ts, t);
        add(e, "tolerations", ts);
    }
    if (chance(12)) {
        cJSON *c = obj(), *r = obj();
        add(r, "cap", str(PICK(((const char *[]){"1", "2", "3", "700m", "5"}))));
        add(c, "requests", r);
        add(e, "capacity", c);
    }
    return e;
}

static cJSON *gen_claim(int i)
{
    char name[32];
    snprintf(name, sizeof name, "claim-%d", i);
    cJSON *o = typed("resource.k8s.io/v1", "ResourceClaim", name, "default"), *spec = obj(),
          *devs = obj(), *reqs = cJSON_CreateArray();
    int nreq = chance(60) ? 1 : 2 + (int)rnd(2);
    for (int r = 0; r < nreq; r++) {
        char rn[16];
        snprintf(rn, sizeof rn, "req-%d", r);
        cJSON *q = obj();
        add(q, "name", str(rn));
        if (chance(25)) {
            cJSON *fa = cJSON_CreateArray();
            int ns = 2 + (int)rnd(2);
            for (int s = 0; s < ns; s++) {
                char sn[16];
                snprintf(sn, sizeof sn, "sub-%d", s);
                push(fa, exact(sn, 1));
            }
            add(q, "firstAvailable", fa);
        } else {
            add(q, "exactly", exact(rn, 0));
        }
        push(reqs, q);
    }
    add(devs, "requests", reqs);
    if (chance(25)) {
        cJSON *cs = cJSON_CreateArray(), *c = obj();
        add(c, chance(60) ? "matchAttribute" : "distinctAttribute",
            str(chance(80) ? "driver-a/numa" : "driver-a/model"));
        if (chance(30)) {
            cJSON *rq = cJSON_CreateArray();
            push(rq, str("req-0"));
            if (chance(50))
                push(rq, str("req-1/sub-1"));
            add(c, "requests", rq);
        }
        push(cs, c);
        add(devs, "constraints", cs);
    }
    if (chance(15)) {
        cJSON *cfg = cJSON_CreateArray(), *c = obj(), *op = obj(), *par = obj();
        if (chance(50)) {
            cJSON *rq = cJSON_CreateArray();
            push(rq, str(chance(50) ? "req-0" : "req-0/sub-1"));
            add(c, "requests", rq);
        }
        add(par, "claim", cJSON_CreateNumber(i));
        add(op, "driver", str("driver-a"));
        add(op, "parameters", par);
        add(c, "opaque", op);
        push(cfg, c);
        add(devs, "config", cfg);
    }
    add(spec, "devices", devs);
    add(o, "spec", spec);
    return o;
}

static cJSON *gen_class(const char *name, const char *expr, int config)
{
    cJSON *o = typed("resource.k8s.io/v1", "DeviceClass", name, NULL), *spec = obj(),
          *sels = cJSON_CreateArray(), *s = obj(), *c = obj();
    add(c, "expression", str(expr));
    add(s, "cel", c);
    push(sels, s);
    add(spec, "selectors", sels);
    if (config) {
        cJSON *cfg = cJSON_CreateArray(), *e = obj(), *op = obj(), *par = obj();
        add(par, "class", str(name));
        add(op, "driver", str("driver-a"));
        add(op, "parameters", par);
        add(e, "opaque", op);
        push(cfg, e);
        add(spec, "config", cfg);
    }
    add(o, "spec", spec);
    return o;
}

static const char *const feature_names[] = {"AdminAccess",
                                            "PrioritizedList",
                                            "PartitionableDevices",
                                            "DeviceTaints",
                                            "DeviceBindingAndStatus",
                                            "ConsumableCapacity",
                                            "FractionalCapacityRange"};

static cJSON *gen_case(ks_dra_features *f)
{
    cJSON *c = obj(), *feat = obj();
    /* v1.37.2's defaults (all but FractionalCapacityRange), everything on, or a random mix */
    unsigned mode = rnd(100);
    bool v[7];
    for (int i = 0; i < 7; i++) {
        v[i] = mode < 40 ? i != 6 : mode < 80 ? true : chance(50);
        add(feat, feature_names[i], cJSON_CreateBool(v[i]));
    }
    f->admin_access = v[0];
    f->prioritized_list = v[1];
    f->partitionable_devices = v[2];
    f->device_taints = v[3];
    f->device_binding_and_status = v[4];
    f->consumable_capacity = v[5];
    f->fractional_capacity_range = v[6];
    add(c, "features", feat);
    int n2 = chance(20);
    cJSON *node = typed("v1", "Node", n2 ? "node-2" : "node-1", NULL), *labels = obj();
    add(labels, "region", str(n2 ? "region-2" : "region-1"));
    add(cJSON_GetObjectItem(node, "metadata"), "labels", labels);
    add(c, "node", node);
    gen g = {.slices = cJSON_CreateArray()};
    gen_slices(&g);
    add(c, "slices", g.slices);
    cJSON *classes = cJSON_CreateArray();
    push(classes, gen_class("class-a", "device.driver == \"driver-a\"", chance(30)));
    push(classes, gen_class("class-b", "device.driver == \"driver-b\"", chance(20)));
    push(classes, gen_class("class-any", "true", 0));
    add(c, "classes", classes);
    cJSON *claims = cJSON_CreateArray();
    int nclaims = chance(50) ? 1 : 2 + (int)rnd(2);
    for (int i = 0; i < nclaims; i++)
        push(claims, gen_claim(i));
    add(c, "claims", claims);
    cJSON *alloc = cJSON_CreateArray(), *shared = cJSON_CreateArray(),
          *capacity = cJSON_CreateArray();
    for (int i = 0; i < g.nids; i++) {
        if (g.multi[i] && chance(25)) {
            push(shared, str(g.ids[i]));
            if (chance(70)) {
                cJSON *e = obj();
                add(e, "device", str(g.ids[i]));
                add(e, "name", str("cap"));
                add(e, "value", str(chance(50) ? "1" : "2"));
                push(capacity, e);
            }
        } else if (chance(12)) {
            push(alloc, str(g.ids[i]));
        }
    }
    add(c, "allocated", alloc);
    add(c, "shared", shared);
    add(c, "capacity", capacity);
    return c;
}

/* ---- our side ------------------------------------------------------------------------------- */

static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    size_t l = strlen(buf);
    va_start(ap, fmt);
    vsnprintf(buf + l, n - l, fmt, ap);
    va_end(ap);
}

static const char *sym(ks_sym s)
{
    const char *p = ks__sym_str(s);
    return p ? p : "";
}

static void render_reqs(char *buf, size_t n, const ks_selector_req *r, uint32_t nr)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    for (uint32_t i = 0; i < nr; i++) {
        cat(buf, n, "%s%s %s", i ? "," : "", sym(r[i].key), ops[r[i].op]);
        for (uint32_t j = 0; j < r[i].nvalues; j++)
            cat(buf, n, "%s%s", j ? "|" : " ", sym(r[i].values[j]));
    }
}

static int cmp_amount(const void *x, const void *y)
{
    return strcmp(((const ks_dra_capacity_amount *)x)->name,
                  ((const ks_dra_capacity_amount *)y)->name);
}

/* The outcome in the oracle's notation (main.go: render). */
static void render(char *buf, size_t n, const ks_dra_alloc_output *out)
{
    buf[0] = 0;
    switch (out->status) {
    case KS_DRA_ERROR:
        cat(buf, n, "ERR %s", out->err);
        return;
    case KS_DRA_NODE_ERROR:
        cat(buf, n, "NODEERR %s", out->err);
        return;
    case KS_DRA_UNSUITABLE:
        cat(buf, n, "NONE");
        return;
    case KS_DRA_ALLOCATED:
        break;
    }
    cat(buf, n, "OK ");
    for (size_t c = 0; c < out->nresults; c++) {
        const ks_dra_alloc_result *r = &out->results[c];
        cat(buf, n, "%s[", c ? "; " : "");
        for (uint32_t i = 0; i < r->ndevices; i++) {
            const ks_dra_alloc_device *d = &r->devices[i];
            cat(buf, n, "%s%s:%s/%s/%s", i ? " " : "", d->request, d->driver, d->pool, d->device);
            if (d->admin_access)
                cat(buf, n, "+admin");
            if (d->share_id)
                cat(buf, n, "+share");
            if (d->nconsumed) {
                ks_dra_capacity_amount am[64];
                uint32_t k = d->nconsumed < 64 ? d->nconsumed : 64;
                memcpy(am, d->consumed, k * sizeof am[0]);
                qsort(am, k, sizeof am[0], cmp_amount);
                for (uint32_t j = 0; j < k; j++)
                    cat(buf, n, "%s%s=%s", j ? "," : "{", am[j].name, am[j].text);
                cat(buf, n, "}");
            }
            for (uint32_t j = 0; j < d->ntolerations; j++)
                cat(buf, n, "+tol(%s)", d->tolerations[j].key);
            for (uint32_t j = 0; j < d->nbinding_conditions; j++)
                cat(buf, n, "+bc(%s)", d->binding_conditions[j]);
            for (uint32_t j = 0; j < d->nbinding_failure_conditions; j++)
                cat(buf, n, "+bfc(%s)", d->binding_failure_conditions[j]);
        }
        cat(buf, n, "] @");
        const ks_node_selector_term *t = r->node_selector;
        if (!t) {
            cat(buf, n, "any");
        } else if (t->nfields == 1 && t->nexprs == 0 &&
                   !strcmp(sym(t->fields[0].key), "metadata.name") && t->fields[0].nvalues == 1) {
            cat(buf, n, "%s", sym(t->fields[0].values[0]));
        } else {
            if (t->nexprs) {
                cat(buf, n, "E(");
                render_reqs(buf, n, t->exprs, t->nexprs);
                cat(buf, n, ")");
            }
            if (t->nfields) {
                cat(buf, n, "F(");
                render_reqs(buf, n, t->fields, t->nfields);
                cat(buf, n, ")");
            }
        }
        for (uint32_t i = 0; i < r->nconfig; i++) {
            const ks_dra_alloc_config *cf = &r->config[i];
            cat(buf, n, "%s%s:", i ? " " : " {", cf->from_class ? "class" : "claim");
            if (!cf->nrequests)
                cat(buf, n, "*");
            for (uint32_t j = 0; j < cf->nrequests; j++)
                cat(buf, n, "%s%s", j ? "," : "", cf->requests[j]);
            cat(buf, n, ":%s", cf->parameters);
        }
        if (r->nconfig)
            cat(buf, n, "}");
    }
}

static ks_dra_device_ref ref(char *s)
{
    ks_dra_device_ref r;
    char *p1 = strchr(s, '/'), *p2 = strrchr(s, '/');
    *p1 = 0;
    *p2 = 0;
    r.driver = s;
    r.pool = p1 + 1;
    r.device = p2 + 1;
    return r;
}

#define MAXO 64

/* Runs the case through our allocator; 0 with buf rendered, -1 when an object did not parse. */
static int ours(const cJSON *c, const ks_dra_features *f, ks_dra_cel_cache *cel, char *buf,
                size_t n)
{
    ks__draobj *objs[3 * MAXO];
    size_t nobjs = 0, nsl = 0, ncl = 0, ncm = 0;
    const ks_resource_slice *slices[MAXO];
    const ks_device_class *classes[MAXO];
    const ks_resource_claim *claims[MAXO];
    char err[512];
    const cJSON *it;
    int rc = 0;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(c, "slices"))
    {
        ks__draobj *o = NULL;
        if (ks__draobj_from_json(it, &o, err, sizeof err) || nsl == MAXO) {
            snprintf(buf, n, "PARSE slice: %s", err);
            rc = -1;
            goto done;
        }
        slices[nsl++] = ks__dra_slice(objs[nobjs++] = o);
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(c, "classes"))
    {
        ks__draobj *o = NULL;
        if (ks__draobj_from_json(it, &o, err, sizeof err) || ncl == MAXO) {
            snprintf(buf, n, "PARSE class: %s", err);
            rc = -1;
            goto done;
        }
        classes[ncl++] = ks__dra_class(objs[nobjs++] = o);
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(c, "claims"))
    {
        ks__draobj *o = NULL;
        if (ks__draobj_from_json(it, &o, err, sizeof err) || ncm == MAXO) {
            snprintf(buf, n, "PARSE claim: %s", err);
            rc = -1;
            goto done;
        }
        claims[ncm++] = ks__dra_claim(objs[nobjs++] = o);
    }
    ks_node *node = NULL;
    if (ks__node_from_json(cJSON_GetObjectItem(c, "node"), &node, err, sizeof err)) {
        snprintf(buf, n, "PARSE node: %s", err);
        rc = -1;
        goto done;
    }
    static char storage[3][256][96];
    ks_dra_device_ref alloc[256], shared[256];
    ks_dra_device_capacity caps[256];
    ks_dra_capacity_amount amounts[256];
    size_t nal = 0, nsh = 0, ncap = 0;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(c, "allocated"))
    {
        snprintf(storage[0][nal], sizeof storage[0][0], "%s", it->valuestring);
        alloc[nal] = ref(storage[0][nal]);
        nal++;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(c, "shared"))
    {
        snprintf(storage[1][nsh], sizeof storage[1][0], "%s", it->valuestring);
        shared[nsh] = ref(storage[1][nsh]);
        nsh++;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(c, "capacity"))
    {
        snprintf(storage[2][ncap], sizeof storage[2][0], "%s",
                 cJSON_GetObjectItem(it, "device")->valuestring);
        caps[ncap].id = ref(storage[2][ncap]);
        amounts[ncap].name = cJSON_GetObjectItem(it, "name")->valuestring;
        ks__quantity_parse(cJSON_GetObjectItem(it, "value")->valuestring, NULL,
                           &amounts[ncap].milli);
        caps[ncap].namounts = 1;
        caps[ncap].amounts = &amounts[ncap];
        ncap++;
    }
    ks_dra_allocated_state st = {nal, alloc, nsh, shared, ncap, caps};
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    ks_dra_alloc_input in = {.deadline_ns = (int64_t)(now.tv_sec + 2) * 1000000000 + now.tv_nsec,
                             .features = *f,
                             .node = node,
                             .slices = slices,
                             .nslices = nsl,
                             .classes = classes,
                             .nclasses = ncl,
                             .allocated = &st,
                             .cel = cel};
    ks_dra_alloc_output out;
    if (ks_dra_allocate(&in, claims, ncm, &out)) {
        snprintf(buf, n, "ENOMEM");
    } else {
        char *tmp = malloc(n);
        render(tmp, n, &out);
        size_t k = 0; /* newlines as \n, as the oracle writes them */
        for (const char *p = tmp; *p && k + 2 < n; p++) {
            if (*p == '\n') {
                buf[k++] = '\\';
                buf[k++] = 'n';
            } else {
                buf[k++] = *p;
            }
        }
        buf[k] = 0;
        free(tmp);
        ks_dra_alloc_output_free(&out);
    }
    ks__node_unref(node);
done:
    for (size_t i = 0; i < nobjs; i++)
        ks__draobj_unref(objs[i]);
    return rc;
}

/* ---- the oracle's pipe ---------------------------------------------------------------------- */

static FILE *to_oracle, *from_oracle;

static void start_oracle(const char *path)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out)) {
        perror("pipe");
        exit(2);
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(path, path, (char *)NULL);
        perror("exec oracle");
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_oracle = fdopen(in[1], "w");
    from_oracle = fdopen(out[0], "r");
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s ORACLE CASES SEED\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    ks__host_init();
    long cases = atol(argv[2]);
    rng = (uint64_t)strtoull(argv[3], NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
    start_oracle(argv[1]);
    ks_dra_cel_cache *cel = ks_dra_cel_cache_new();
    static char mine[1 << 16], theirs[1 << 16];
    long agree = 0, differ = 0, parse = 0, timeouts = 0, timeouts_both = 0, outcomes[4] = {0};
    for (long i = 0; i < cases; i++) {
        ks_dra_features f;
        cJSON *c = gen_case(&f);
        char *line = cJSON_PrintUnformatted(c);
        fprintf(to_oracle, "%s\n", line);
        fflush(to_oracle);
        if (!fgets(theirs, sizeof theirs, from_oracle)) {
            fprintf(stderr, "oracle died at case %ld\n", i);
            return 2;
        }
        theirs[strcspn(theirs, "\n")] = 0;
        int parsed = ours(c, &f, cel, mine, sizeof mine);
        int t_theirs = !strcmp(theirs, "TIMEOUT"),
            t_mine = strstr(mine, "filter operation aborted: context deadline exceeded") != NULL;
        if (t_theirs || t_mine) {
            /* a search past 2 s on either side (upstream's filterTimeout bounds those): skipped */
            timeouts++;
            timeouts_both += t_theirs && t_mine;
            if (t_theirs != t_mine)
                fprintf(stderr, "case %ld: only %s searched past 2 s; the other: %.200s\n", i,
                        t_mine ? "ours" : "the oracle", t_mine ? theirs : mine);
        } else if (parsed) {
            parse++;
            if (parse <= 3)
                fprintf(stderr, "case %ld: %s\n  %s\n", i, mine, line);
        } else if (strcmp(mine, theirs)) {
            differ++;
            if (differ <= 5)
                fprintf(stderr, "DIFFER case %ld\n  ours:   %s\n  oracle: %s\n  case: %s\n", i,
                        mine, theirs, line);
        } else {
            if (getenv("DRA_DIFFFUZZ_VERBOSE"))
                printf("%s\n", mine);
            agree++;
            outcomes[!strncmp(mine, "OK", 2)     ? 0
                     : !strncmp(mine, "NONE", 4) ? 1
                     : !strncmp(mine, "ERR", 3)  ? 2
                                                 : 3]++;
        }
        free(line);
        cJSON_Delete(c);
        if ((i + 1) % 10000 == 0) {
            printf("dra_alloc_difffuzz: %ld cases so far: %ld agree, %ld differ\n", i + 1, agree,
                   differ);
            fflush(stdout);
        }
    }
    fclose(to_oracle);
    int st;
    wait(&st);
    ks_dra_cel_cache_free(cel);
    printf("dra_alloc_difffuzz: %ld cases (seed %s): %ld agree (allocated %ld, unsuitable %ld, "
           "error %ld, node error %ld), %ld differ, %ld not parsed here, %ld searches past 2 s "
           "skipped (%ld on both sides)\n",
           cases, argv[3], agree, outcomes[0], outcomes[1], outcomes[2], outcomes[3], differ, parse,
           timeouts, timeouts_both);
    return differ || parse ? 1 : 0;
}
