/*
 * The structured DRA allocator (core/sched/dra_allocator.c) against the shared test table of
 * k8s.io/dynamic-resource-allocation v0.37.2 (structured/internal/allocatortesting
 * allocator_testing.go, TestAllocator), ported case by case under upstream's names: the same
 * objects, the same feature set per case (no features named: all off, as upstream's Features{}),
 * the same expected allocations and the same error texts. Upstream matches results ignoring their
 * order; here the rendering is in the allocator's order, which is upstream's (the oracle in
 * tests/tools/dra-alloc-oracle compares that order too).
 *
 * JSON is written with single quotes (turned into double quotes) and backquotes (turned into \"
 * inside JSON strings, for CEL string literals).
 */
#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/dra_objects.h"
#include "api/intern.h"
#include "api/objects.h"
#include "harness.h"
#include "sched/dra_allocator.h"
#include "sched/host_api.h"

static void setup(void) { ks__host_init(); }

TestSuite(dra_alloc, .init = setup);

/* ---- object builders (the Go helpers' C twins) ---------------------------------------------- */

#define RES "'apiVersion':'resource.k8s.io/v1',"
#define CLASS(name, driver)                                                                        \
    "{" RES "'kind':'DeviceClass','metadata':{'name':'" name "'},'spec':{'selectors':[{'cel':{"    \
    "'expression':'device.driver == `" driver "`'}}]}}"
#define CLASS_CFG(name, driver, attr)                                                              \
    "{" RES "'kind':'DeviceClass','metadata':{'name':'" name "'},'spec':{'selectors':[{'cel':{"    \
    "'expression':'device.driver == `" driver "`'}}],'config':[{'opaque':{'driver':'" driver      \
    "','parameters':{'" attr "':'" attr "Value'}}}]}}"
/* A slice: where ("'nodeName':'node-1'", "'allNodes':true", ...), pool name, generation and
 * count, driver, then the devices' JSON. */
#define SLICEX(name, where, pool, gen, count, driver, extra)                                       \
    "{" RES "'kind':'ResourceSlice','metadata':{'name':'" name "'},'spec':{'driver':'" driver      \
    "','pool':{'name':'" pool "','generation':" gen ",'resourceSliceCount':" count "}," where     \
    extra "}}"
#define SLICE(name, node, pool, driver, devices)                                                   \
    SLICEX(name, "'nodeName':'" node "'", pool, "1", "1", driver, ",'devices':[" devices "]")
#define DEV(name) "{'name':'" name "'}"
#define DEVX(name, extra) "{'name':'" name "'," extra "}"
#define CLAIMX(name, requests, extra)                                                              \
    "{" RES "'kind':'ResourceClaim','metadata':{'name':'" name "'},'spec':{'devices':{"            \
    "'requests':[" requests "]" extra "}}}"
#define CLAIM(name, requests) CLAIMX(name, requests, "")
#define REQX(name, class, count, extra)                                                            \
    "{'name':'" name "','exactly':{'deviceClassName':'" class "','allocationMode':'ExactCount',"  \
    "'count':" count extra "}}"
#define REQ(name, class, count) REQX(name, class, count, "")
#define ALLREQX(name, class, extra)                                                                \
    "{'name':'" name "','exactly':{'deviceClassName':'" class "','allocationMode':'All'" extra    \
    "}}"
#define ALLREQ(name, class) ALLREQX(name, class, "")
#define PRIO(name, subs) "{'name':'" name "','firstAvailable':[" subs "]}"
#define SUBX(name, class, count, extra)                                                            \
    "{'name':'" name "','deviceClassName':'" class "','allocationMode':'ExactCount','count':"      \
    count extra "}"
#define SUB(name, class, count) SUBX(name, class, count, "")
#define SEL(expr) ",'selectors':[{'cel':{'expression':'" expr "'}}]"
#define NODE(name, region)                                                                         \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'" name "','labels':{'region':'" region  \
    "','planet':'earth'}}}"
#define COUNTERS1(set, name, value)                                                                \
    "'consumesCounters':[{'counterSet':'" set "','counters':{'" name "':{'value':'" value "'}}}]"
#define CSET(name, cname, value) "{'name':'" name "','counters':{'" cname "':{'value':'" value "'}}}"

#define MAXOBJ 40

typedef struct tcase {
    const char *features; /* upstream Features names, space separated; "" none */
    const char *node;     /* NULL: node-1 in region-1 */
    const char *classes[MAXOBJ];
    const char *slices[MAXOBJ];
    const char *claims[MAXOBJ];
    const char *allocated[MAXOBJ]; /* "driver/pool/device" */
    const char *shared[MAXOBJ];    /* allocated shares: "driver/pool/device" */
    const char *capacity[MAXOBJ];  /* aggregated capacity: "driver/pool/device name milli" */
    const char *taint_rules[MAXOBJ];
    const char *expect; /* rendered results ("" none); NULL when error is set */
    const char *error;  /* an error containing this text */
    uint64_t steps;     /* allocateOne invocations, 0: not checked */
} tcase;

/* JSON text with the quoting conventions above. */
static cJSON *json(const char *text)
{
    size_t n = strlen(text);
    char *copy = malloc(2 * n + 1), *o = copy;
    cr_assert_not_null(copy);
    for (const char *p = text; *p; p++) {
        if (*p == '\'')
            *o++ = '"';
        else if (*p == '`') {
            *o++ = '\\';
            *o++ = '"';
        } else
            *o++ = *p;
    }
    *o = 0;
    cJSON *obj = cJSON_Parse(copy);
    cr_assert_not_null(obj, "invalid JSON: %s", copy);
    free(copy);
    return obj;
}

static ks__draobj *dra(const char *text)
{
    char err[512] = "";
    ks__draobj *o = NULL;
    cJSON *obj = json(text);
    int rc = ks__draobj_from_json(obj, &o, err, sizeof err);
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "parse failed: %s: %s", err, text);
    return o;
}

static ks_dra_features features(const char *names)
{
    ks_dra_features f = {0};
    f.admin_access = strstr(names, "AdminAccess") != NULL;
    f.prioritized_list = strstr(names, "PrioritizedList") != NULL;
    f.partitionable_devices = strstr(names, "PartitionableDevices") != NULL;
    f.device_taints = strstr(names, "DeviceTaints") != NULL;
    f.device_binding_and_status = strstr(names, "DeviceBindingAndStatus") != NULL;
    f.consumable_capacity = strstr(names, "ConsumableCapacity") != NULL;
    f.fractional_capacity_range = strstr(names, "FractionalCapacityRange") != NULL;
    if (!strcmp(names, "default"))
        f = ks_dra_features_default();
    return f;
}

static void cat(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    size_t l = strlen(buf);
    va_start(ap, fmt);
    vsnprintf(buf + l, n - l, fmt, ap);
    va_end(ap);
}

static void render_reqs(char *buf, size_t n, const ks_selector_req *r, uint32_t nr)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    for (uint32_t i = 0; i < nr; i++) {
        cat(buf, n, "%s%s %s", i ? "," : "", ks__sym_str(r[i].key), ops[r[i].op]);
        for (uint32_t j = 0; j < r[i].nvalues; j++)
            cat(buf, n, "%s%s", j ? "|" : " ", ks__sym_str(r[i].values[j]));
    }
}

/* One claim's result: "[req:driver/pool/device+flags ...] @node-selector {configs}". */
static void render(char *buf, size_t n, const ks_dra_alloc_output *out)
{
    buf[0] = 0;
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
            for (uint32_t j = 0; j < d->nconsumed; j++)
                cat(buf, n, "%s%s=%lldm", j ? "," : "{", d->consumed[j].name,
                    (long long)d->consumed[j].milli);
            if (d->nconsumed)
                cat(buf, n, "}");
            for (uint32_t j = 0; j < d->ntolerations; j++)
                cat(buf, n, "+tol(%s)", d->tolerations[j].key);
            for (uint32_t j = 0; j < d->nbinding_conditions; j++)
                cat(buf, n, "+bc(%s)", d->binding_conditions[j]);
            for (uint32_t j = 0; j < d->nbinding_failure_conditions; j++)
                cat(buf, n, "+bfc(%s)", d->binding_failure_conditions[j]);
        }
        cat(buf, n, "] @");
        if (!r->node_selector) {
            cat(buf, n, "any");
        } else {
            const ks_node_selector_term *t = r->node_selector;
            if (t->nfields == 1 && t->nexprs == 0 &&
                !strcmp(ks__sym_str(t->fields[0].key), "metadata.name") &&
                t->fields[0].nvalues == 1)
                cat(buf, n, "%s", ks__sym_str(t->fields[0].values[0]));
            else {
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

static size_t count(const char *const *l)
{
    size_t n = 0;
    while (n < MAXOBJ && l[n])
        n++;
    return n;
}

static ks_dra_device_ref parse_ref(const char *s, char *storage)
{
    strcpy(storage, s);
    ks_dra_device_ref r;
    char *p1 = strchr(storage, '/');
    char *p2 = strrchr(storage, '/');
    char *sp = strchr(storage, ' ');
    if (sp)
        *sp = 0;
    *p1 = 0;
    *p2 = 0;
    r.driver = storage;
    r.pool = p1 + 1;
    r.device = p2 + 1;
    return r;
}

/* Runs tc and returns the output (caller frees); rendered into buf. */
static void run_case(const tcase *tc, char *buf, size_t n, ks_dra_alloc_output *out)
{
    size_t ncl = count(tc->classes), nsl = count(tc->slices), ncm = count(tc->claims),
           ntr = count(tc->taint_rules);
    ks__draobj *objs[4 * MAXOBJ];
    size_t nobjs = 0;
    const ks_device_class *classes[MAXOBJ];
    const ks_resource_slice *slices[MAXOBJ];
    const ks_resource_claim *claims[MAXOBJ];
    const ks_device_taint_rule *rules[MAXOBJ];
    for (size_t i = 0; i < ncl; i++)
        classes[i] = ks__dra_class(objs[nobjs++] = dra(tc->classes[i]));
    for (size_t i = 0; i < nsl; i++)
        slices[i] = ks__dra_slice(objs[nobjs++] = dra(tc->slices[i]));
    for (size_t i = 0; i < ncm; i++)
        claims[i] = ks__dra_claim(objs[nobjs++] = dra(tc->claims[i]));
    for (size_t i = 0; i < ntr; i++)
        rules[i] = ks__dra_taint_rule(objs[nobjs++] = dra(tc->taint_rules[i]));
    ks_node *node = th_node(tc->node ? tc->node : NODE("node-1", "region-1"));

    static char storage[3][MAXOBJ][200];
    ks_dra_device_ref alloc[MAXOBJ], shared[MAXOBJ];
    ks_dra_device_capacity caps[MAXOBJ];
    ks_dra_capacity_amount amounts[MAXOBJ];
    size_t nal = count(tc->allocated), nsh = count(tc->shared), ncap = count(tc->capacity);
    for (size_t i = 0; i < nal; i++)
        alloc[i] = parse_ref(tc->allocated[i], storage[0][i]);
    for (size_t i = 0; i < nsh; i++)
        shared[i] = parse_ref(tc->shared[i], storage[1][i]);
    for (size_t i = 0; i < ncap; i++) {
        char name[100];
        long long milli;
        caps[i].id = parse_ref(tc->capacity[i], storage[2][i]);
        cr_assert_eq(sscanf(strchr(tc->capacity[i], ' ') + 1, "%99s %lld", name, &milli), 2);
        amounts[i].name = strdup(name);
        amounts[i].milli = milli;
        caps[i].namounts = 1;
        caps[i].amounts = &amounts[i];
    }
    ks_dra_allocated_state st = {nal, alloc, nsh, shared, ncap, caps};
    ks_dra_cel_cache *cel = ks_dra_cel_cache_new();
    ks_dra_alloc_input in = {
        .features = features(tc->features ? tc->features : ""),
        .node = node,
        .slices = slices,
        .nslices = nsl,
        .classes = classes,
        .nclasses = ncl,
        .taint_rules = rules,
        .ntaint_rules = ntr,
        .allocated = &st,
        .cel = cel,
        .fixed_share_id = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
    };
    cr_assert_eq(ks_dra_allocate(&in, claims, ncm, out), 0);
    render(buf, n, out);
    /* The results point into the objects: render before letting them go. */
    for (size_t i = 0; i < ncap; i++)
        free((void *)amounts[i].name);
    ks_dra_cel_cache_free(cel);
    ks__node_unref(node);
    for (size_t i = 0; i < nobjs; i++)
        ks__draobj_unref(objs[i]);
}

static void check(const char *name, const tcase *tc)
{
    char buf[8192];
    ks_dra_alloc_output out;
    run_case(tc, buf, sizeof buf, &out);
    if (tc->error) {
        cr_assert(out.status == KS_DRA_ERROR || out.status == KS_DRA_NODE_ERROR,
                  "%s: expected error containing \"%s\", got status %d (%s)", name, tc->error,
                  out.status, buf);
        cr_assert(strstr(out.err, tc->error), "%s: error \"%s\" lacks \"%s\"", name, out.err,
                  tc->error);
    } else {
        cr_assert(out.status == KS_DRA_ALLOCATED || out.status == KS_DRA_UNSUITABLE,
                  "%s: unexpected error (status %d): %s", name, out.status, out.err);
        cr_assert_str_eq(buf, tc->expect, "%s: got\n  %s\nwant\n  %s", name, buf, tc->expect);
    }
    if (tc->steps)
        cr_assert_eq(out.allocate_one_calls, tc->steps, "%s: %llu allocateOne calls, want %llu",
                     name, (unsigned long long)out.allocate_one_calls,
                     (unsigned long long)tc->steps);
    ks_dra_alloc_output_free(&out);
}

#define CASE(name, ...)                                                                            \
    Test(dra_alloc, name)                                                                          \
    {                                                                                              \
        const tcase tc = {__VA_ARGS__};                                                            \
        check(#name, &tc);                                                                         \
    }

#define CLASS_A CLASS("class-a", "driver-a")
#define CLASS_B CLASS("class-b", "driver-b")
#define ONE_DEV(slice, node, pool, driver) SLICE(slice, node, pool, driver, DEV("device-1"))

/* ---- the table ------------------------------------------------------------------------------ */

CASE(empty, .expect = "")

CASE(simple, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-1] @node-1")
