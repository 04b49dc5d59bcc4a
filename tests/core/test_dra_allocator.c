/*
 * The structured DRA allocator (core/sched/dra_allocator.c) against the shared test table of
 * k8s.io/dynamic-resource-allocation v0.37.2 (structured/internal/allocatortesting
 * allocator_testing.go, TestAllocator), ported case by case under upstream's names: the same
 * objects, the same feature set per case (no features named: all off, as upstream's Features{}),
 * the same expected allocations and the same error texts: all 230 cases whose features the
 * incubating implementation supports (upstream skips the other 45 for it too). Upstream matches
 * results ignoring their order; here the rendering is in the allocator's order, which is
 * upstream's (the oracle in tests/tools/dra-alloc-oracle compares that order too).
 *
 * Claims get the namespace "default" when parsed (as the API server gives them), so the errors
 * that upstream's namespace-less test claims render "claim claim-0" read "claim default/claim-0".
 *
 * JSON is written with single quotes (turned into double quotes) and backquotes (turned into \"
 * inside JSON strings, for CEL string literals).
 */
#include <criterion/criterion.h>

#include <stdarg.h>
#include <stdatomic.h>
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
    "'expression':'device.driver == `" driver "`'}}],'config':[{'opaque':{'driver':'" driver       \
    "','parameters':{'" attr "':'" attr "Value'}}}]}}"
/* A slice: where ("'nodeName':'node-1'", "'allNodes':true", ...), pool name, generation and
 * count, driver, then the devices' JSON. */
#define SLICEX(name, where, pool, gen, count, driver, extra)                                       \
    "{" RES "'kind':'ResourceSlice','metadata':{'name':'" name "'},'spec':{'driver':'" driver      \
    "','pool':{'name':'" pool "','generation':" gen ",'resourceSliceCount':" count                 \
    "}," where extra "}}"
#define SLICE(name, node, pool, driver, devices)                                                   \
    SLICEX(name, "'nodeName':'" node "'", pool, "1", "1", driver, ",'devices':[" devices "]")
#define DEV(name) "{'name':'" name "'}"
#define DEVX(name, extra) "{'name':'" name "'," extra "}"
#define CLAIMX(name, requests, extra)                                                              \
    "{" RES "'kind':'ResourceClaim','metadata':{'name':'" name "'},'spec':{'devices':{"            \
    "'requests':[" requests "]" extra "}}}"
#define CLAIM(name, requests) CLAIMX(name, requests, "")
#define REQX(name, class, count, extra)                                                            \
    "{'name':'" name "','exactly':{'deviceClassName':'" class "','allocationMode':'ExactCount',"   \
                                                              "'count':" count extra "}}"
#define REQ(name, class, count) REQX(name, class, count, "")
#define ALLREQX(name, class, extra)                                                                \
    "{'name':'" name "','exactly':{'deviceClassName':'" class "','allocationMode':'All'" extra "}" \
                                                              "}"
#define ALLREQ(name, class) ALLREQX(name, class, "")
#define PRIO(name, subs) "{'name':'" name "','firstAvailable':[" subs "]}"
#define SUBX(name, class, count, extra)                                                            \
    "{'name':'" name                                                                               \
    "','deviceClassName':'" class "','allocationMode':'ExactCount','count':" count extra "}"
#define SUB(name, class, count) SUBX(name, class, count, "")
#define SEL(expr) ",'selectors':[{'cel':{'expression':'" expr "'}}]"
#define NODE(name, region)                                                                         \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'" name "','labels':{'region':'" region   \
    "','planet':'earth'}}}"
#define COUNTERS1(set, name, value)                                                                \
    "'consumesCounters':[{'counterSet':'" set "','counters':{'" name "':{'value':'" value "'}}}]"
#define CSET(name, cname, value)                                                                   \
    "{'name':'" name "','counters':{'" cname "':{'value':'" value "'}}}"

#define MAXOBJ 40

typedef struct tcase {
    int64_t deadline_ns;
    const atomic_int *cancelled;
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

/* JSON text with the quoting conventions above; "#DEVS<n>#" stands for the n devices device-0 ..
 * device-<n-1> (sliceWithMultipleDevices). */
static cJSON *json(const char *text)
{
    size_t n = strlen(text);
    char *copy = malloc(2 * n + 64 * 1024), *o = copy;
    cr_assert_not_null(copy);
    for (const char *p = text; *p; p++) {
        int ndev;
        if (!strncmp(p, "#DEVS", 5) && sscanf(p + 5, "%d#", &ndev) == 1) {
            for (int i = 0; i < ndev; i++)
                o += sprintf(o, "%s{\"name\":\"device-%d\"}", i ? "," : "", i);
            p = strchr(p + 5, '#');
            continue;
        }
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
                cat(buf, n, "%s%s=%s", j ? "," : "{", d->consumed[j].name, d->consumed[j].text);
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
            cat(buf, n, ":");
            for (const char *q = cf->parameters; *q; q++) /* " as ` (the case's quoting) */
                cat(buf, n, "%c", *q == '"' ? '`' : *q);
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

/* A cache shared by every case when set (concurrent_calls), else one per case. */
static ks_dra_cel_cache *g_cel;

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
    ks_dra_cel_cache *cel = g_cel ? g_cel : ks_dra_cel_cache_new();
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
        .deadline_ns = tc->deadline_ns,
        .cancelled = tc->cancelled,
    };
    cr_assert_eq(ks_dra_allocate(&in, claims, ncm, out), 0);
    render(buf, n, out);
    /* The results point into the objects: render before letting them go. */
    for (size_t i = 0; i < ncap; i++)
        free((void *)amounts[i].name);
    if (cel != g_cel)
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

#define NODESEL_LABEL(key, value)                                                                  \
    "'nodeSelector':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'" key                       \
    "','operator':'In','values':['" value "']}]}]}"
#define NODESEL_NAME(node)                                                                         \
    "'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name',"                 \
    "'operator':'In','values':['" node "']}]}]}"
#define SLICE_AT(name, where, pool, driver, devices)                                               \
    SLICEX(name, where, pool, "1", "1", driver, ",'devices':[" devices "]")
#define ADMIN ",'adminAccess':true"
#define R0_D1 "[req-0:driver-a/pool-1/device-1] @node-1"

CASE(other_node, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-b"),
                ONE_DEV("slice-2", "node-2", "pool-2", "driver-a")},
     .node = NODE("node-2", "region-2"), .expect = "[req-0:driver-a/pool-2/device-1] @node-2")

#define MEM_GE(q) SEL("device.capacity[`driver-a`].memory.compareTo(quantity(`" q "`)) >= 0")
#define MEMDEV(name, q) DEVX(name, "'capacity':{'memory':{'value':'" q "'}}")

CASE(small_and_large,
     .claims = {CLAIM("claim-0",
                      REQX("req-0", "class-a", "1", MEM_GE("1Gi")) "," REQX("req-1", "class-a", "1",
                                                                            MEM_GE("2Gi")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MEMDEV("device-1", "1Gi") "," MEMDEV("device-2", "2Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1:driver-a/pool-1/device-2] @node-1")

CASE(small_and_large_backtrack_requests,
     .claims = {CLAIM("claim-0",
                      REQX("req-0", "class-a", "1", MEM_GE("1Gi")) "," REQX("req-1", "class-a", "1",
                                                                            MEM_GE("2Gi")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MEMDEV("device-2", "2Gi") "," MEMDEV("device-1", "1Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1:driver-a/pool-1/device-2] @node-1")

CASE(small_and_large_backtrack_claims,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", MEM_GE("1Gi"))),
                CLAIM("claim-1", REQX("req-1", "class-a", "1", MEM_GE("2Gi")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MEMDEV("device-2", "2Gi") "," MEMDEV("device-1", "1Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1] @node-1; [req-1:driver-a/pool-1/device-2] @node-1")

CASE(devices_split_across_different_slices,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "2"))}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a"),
                ONE_DEV("slice-2", "node-1", "pool-2", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-2/device-1] @node-1")

CASE(obsolete_slice, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {SLICEX("slice-1-obsolete", "'nodeName':'node-1'", "pool-1", "1", "2", "driver-a",
                       ",'devices':[" DEV("device-1") "]"),
                SLICEX("slice-1-obsolete", "'nodeName':'node-1'", "pool-1", "2", "2", "driver-a",
                       ",'devices':[" DEV("device-2") "]")},
     .expect = "")

CASE(duplicate_slice, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {SLICEX("slice-1", "'nodeName':'node-1'", "pool-1", "1", "2", "driver-a",
                       ",'devices':[" DEV("device-1") "]"),
                SLICEX("slice-1-2", "'nodeName':'node-1'", "pool-1", "1", "2", "driver-a",
                       ",'devices':[" DEV("device-1") "]")},
     .error = "invalid resource pools were encountered")

CASE(no_slices, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .expect = "")

CASE(not_enough_suitable_devices,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-0", REQ("req-1", "class-a", "1"))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "")

CASE(no_classes, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "could not retrieve device class class-a")

CASE(unknown_class, .claims = {CLAIM("claim-0", REQ("req-0", "unknown-class", "1"))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "could not retrieve device class unknown-class")

CASE(empty_class, .claims = {CLAIM("claim-0", REQ("req-0", "", "1"))}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "claim default/claim-0, request req-0: missing device class name (unsupported "
              "request type?)")

CASE(no_claims_to_allocate, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")}, .expect = "")

CASE(all_devices_single, .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = R0_D1)

CASE(all_devices_with_consumed_counters, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))}, .classes = {CLASS_A},
     .slices = {SLICEX("slice-1", "'nodeName':'node-1'", "pool-1", "1", "2", "driver-a",
                       ",'devices':[" DEVX("device-1",
                                           COUNTERS1("counter-set-1", "memory", "4Gi")) "]"),
                SLICEX("slice-2", "'nodeName':'node-1'", "pool-1", "1", "2", "driver-a",
                       ",'sharedCounters':[" CSET("counter-set-1", "memory", "8Gi") "]")},
     .expect = R0_D1)

CASE(all_devices_many, .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a"),
                ONE_DEV("slice-1", "node-1", "pool-2", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-2/device-1] @node-1")

CASE(all_devices_of_the_incomplete_pool,
     .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", ",'count':1"))}, .classes = {CLASS_A},
     .slices = {SLICEX("slice-1", "'nodeName':'node-1'", "pool-1", "1", "2", "driver-a",
                       ",'devices':[" DEV("device-1") "]")},
     .error = "claim default/claim-0, request req-0: asks for all devices, but resource pool "
              "driver-a/pool-1 is currently being updated")

CASE(all_devices_plus_another,
     .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a")),
                CLAIM("claim-1", REQ("req-0", "class-b", "1"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a"),
                ONE_DEV("slice-1", "node-1", "pool-1", "driver-b")},
     .expect = R0_D1 "; [req-0:driver-b/pool-1/device-1] @node-1")

CASE(all_devices_plus_another_reversed,
     .claims = {CLAIM("claim-1", REQ("req-0", "class-b", "1")),
                CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a"),
                ONE_DEV("slice-1", "node-1", "pool-1", "driver-b")},
     .expect = "[req-0:driver-b/pool-1/device-1] @node-1; " R0_D1)

CASE(all_devices_many_plus_another,
     .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a")),
                CLAIM("claim-1", REQ("req-0", "class-b", "1"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEV("device-1") "," DEV("device-2")),
                ONE_DEV("slice-1", "node-1", "pool-1", "driver-b")},
     .expect = "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-1/device-2] @node-1; "
               "[req-0:driver-b/pool-1/device-1] @node-1")

CASE(all_devices_many_plus_another_reversed,
     .claims = {CLAIM("claim-1", REQ("req-0", "class-b", "1")),
                CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEV("device-1") "," DEV("device-2")),
                ONE_DEV("slice-1", "node-1", "pool-1", "driver-b")},
     .expect = "[req-0:driver-b/pool-1/device-1] @node-1; "
               "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-1/device-2] @node-1")

CASE(all_devices_no_solution,
     .claims = {CLAIM("claim-1", REQ("req-0", "class-a", "1")),
                CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "")

CASE(all_devices_no_solution_reversed,
     .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a")),
                CLAIM("claim-1", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "")

CASE(all_devices_slice_without_devices, .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .classes = {CLASS_A}, .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", "")},
     .expect = "")

CASE(all_devices_no_slices, .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .classes = {CLASS_A}, .expect = "")

#define TWO_DEV(slice, node, pool, driver)                                                         \
    SLICE(slice, node, pool, driver, DEV("device-1") "," DEV("device-2"))

CASE(all_devices_some_allocated, .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .allocated = {"driver-a/pool-1/device-1"}, .classes = {CLASS_A},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")}, .expect = "")

CASE(
    all_devices_some_allocated_admin_access, .features = "AdminAccess",
    .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", ADMIN))},
    .allocated = {"driver-a/pool-1/device-1"}, .classes = {CLASS_A},
    .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
    .expect = "[req-0:driver-a/pool-1/device-1+admin req-0:driver-a/pool-1/device-2+admin] @node-1")

CASE(all_devices_some_allocating_admin_access, .features = "AdminAccess",
     .claims = {CLAIM("claim-0",
                      REQX("req-0", "class-a", "1", ADMIN) "," ALLREQX("req-1", "class-a", ADMIN))},
     .classes = {CLASS_A}, .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "")

CASE(
    count_devices_some_allocated_admin_access, .features = "AdminAccess",
    .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "2", ADMIN))},
    .allocated = {"driver-a/pool-1/device-1"}, .classes = {CLASS_A},
    .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
    .expect = "[req-0:driver-a/pool-1/device-1+admin req-0:driver-a/pool-1/device-2+admin] @node-1")

CASE(separate_claims_share_device_admin_access, .features = "AdminAccess",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", ADMIN)),
                CLAIM("claim-1", REQX("req-0", "class-a", "1", ADMIN))},
     .classes = {CLASS_A}, .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-1+admin] @node-1; "
               "[req-0:driver-a/pool-1/device-1+admin] @node-1")

CASE(admin_access_claims_device_allocating_for_non_admin_access, .features = "AdminAccess",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-1", REQX("req-0", "class-a", "1", ADMIN))},
     .classes = {CLASS_A}, .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = R0_D1 "; [req-0:driver-a/pool-1/device-1+admin] @node-1")

#define PRIO_ALL_A_THEN_B                                                                          \
    PRIO("req-0", SUBX("subReq-0", "class-a", "0", "") "," SUB("subReq-1", "class-b", "1"))

/* The Go test sets the first subrequest's mode to All and its count to 0 after building it. */
#define SUB_ALL(name, class)                                                                       \
    "{'name':'" name "','deviceClassName':'" class "','allocationMode':'All'}"
#define PRIO_ALLA_B                                                                                \
    PRIO("req-0", SUB_ALL("subReq-0", "class-a") "," SUB("subReq-1", "class-b", "1"))

CASE(all_devices_slice_without_devices_prioritized_list, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO_ALLA_B)}, .classes = {CLASS_A, CLASS_B},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", ""),
                ONE_DEV("slice-2", "node-1", "pool-2", "driver-b")},
     .expect = "[req-0/subReq-1:driver-b/pool-2/device-1] @node-1")

CASE(all_devices_no_slices_prioritized_list, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO_ALLA_B)}, .classes = {CLASS_A, CLASS_B},
     .slices = {ONE_DEV("slice-2", "node-1", "pool-2", "driver-b")},
     .expect = "[req-0/subReq-1:driver-b/pool-2/device-1] @node-1")

CASE(all_devices_some_allocated_prioritized_list, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO_ALLA_B)}, .allocated = {"driver-a/pool-1/device-1"},
     .classes = {CLASS_A, CLASS_B},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a"),
                ONE_DEV("slice-2", "node-1", "pool-2", "driver-b")},
     .expect = "[req-0/subReq-1:driver-b/pool-2/device-1] @node-1")

CASE(network_attached_device, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {SLICE_AT("slice-1", NODESEL_LABEL("region", "region-1"), "pool-1", "driver-a",
                         DEV("device-1"))},
     .expect = "[req-0:driver-a/pool-1/device-1] @E(region In region-1)")

CASE(unsuccessful_allocation_network_attached_device,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {SLICE_AT("slice-1", NODESEL_LABEL("region", "region-1"), "pool-1", "driver-a",
                         DEV("device-1"))},
     .node = NODE("node-2", "region-2"), .expect = "")

CASE(many_network_attached_devices, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "4"))},
     .classes = {CLASS_A},
     .slices = {SLICE_AT("slice-1", NODESEL_LABEL("region", "region-1"), "pool-1", "driver-a",
                         DEV("device-1")),
                SLICE_AT("slice-1", "'allNodes':true", "pool-2", "driver-a", DEV("device-1")),
                SLICE_AT("slice-1", NODESEL_LABEL("planet", "earth"), "pool-3", "driver-a",
                         DEV("device-1")),
                SLICE_AT("slice-1", NODESEL_NAME("node-1"), "pool-4", "driver-a", DEV("device-1"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-2/device-1 "
               "req-0:driver-a/pool-3/device-1 req-0:driver-a/pool-4/device-1] "
               "@E(region In region-1,planet In earth)F(metadata.name In node-1)")

CASE(local_and_network_attached_devices, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "2"))},
     .classes = {CLASS_A},
     .slices = {SLICE_AT("slice-1", NODESEL_LABEL("region", "region-1"), "pool-1", "driver-a",
                         DEV("device-1")),
                ONE_DEV("slice-1", "node-1", "pool-2", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-2/device-1] @node-1")

CASE(several_different_drivers,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-0", REQ("req-0", "class-b", "1"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a"),
                ONE_DEV("slice-1", "node-1", "pool-1", "driver-b")},
     .expect = R0_D1 "; [req-0:driver-b/pool-1/device-1] @node-1")

CASE(already_allocated_devices, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .allocated = {"driver-a/pool-1/device-1", "driver-a/pool-1/device-2"}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")}, .expect = "")

CASE(admin_access_disabled, .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", ADMIN))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "claim default/claim-0, request req-0: admin access is requested, but the feature is "
              "disabled")

CASE(admin_access_enabled, .features = "AdminAccess",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", ADMIN))},
     .allocated = {"driver-a/pool-1/device-1", "driver-a/pool-1/device-2"}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-1+admin] @node-1")

#define ATTRS(...) "'attributes':{" __VA_ARGS__ "}"
#define A_VER(v) "'driverVersion':{'version':'" v "'}"
#define A_NUMA(v) "'numa':{'int':" v "}"
#define A_STR(v) "'stringAttribute':{'string':'" v "'}"
#define A_BOOL(v) "'boolAttribute':{'bool':" v "}"
#define MATCH(attr) "{'matchAttribute':'driver-a/" attr "'}"
#define MATCH_FOR(req, attr) "{'requests':['" req "'],'matchAttribute':'driver-a/" attr "'}"
#define CONSTRAINTS(...) ",'constraints':[" __VA_ARGS__ "]"
#define R0_R1 "[req-0:driver-a/pool-1/device-1 req-1:driver-a/pool-1/device-2] @node-1"
#define TWO_ATTR_DEVS(a1, a2)                                                                      \
    SLICE("slice-1", "node-1", "pool-1", "driver-a",                                               \
          DEVX("device-1", ATTRS(a1)) "," DEVX("device-2", ATTRS(a2)))

CASE(with_constraint,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a", "1"),
                       CONSTRAINTS(MATCH("numa") "," MATCH("driverVersion") "," MATCH(
                           "stringAttribute") "," MATCH("boolAttribute")))},
     .classes = {CLASS_A},
     .slices = {TWO_ATTR_DEVS(
         A_VER("1.0.0") "," A_NUMA("1") "," A_STR("stringAttributeValue") "," A_BOOL("true"),
         A_VER("1.0.0") "," A_NUMA("1") "," A_STR("stringAttributeValue") "," A_BOOL("true"))},
     .expect = R0_R1)

CASE(with_constraint_non_existent_attribute,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "1"),
                       CONSTRAINTS(MATCH("NonExistentAttribute")))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "")

CASE(with_constraint_not_matching_int_attribute,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "2"), CONSTRAINTS(MATCH("numa")))},
     .classes = {CLASS_A, CLASS_B}, .slices = {TWO_ATTR_DEVS(A_NUMA("1"), A_NUMA("2"))},
     .expect = "")

CASE(with_constraint_not_matching_int_attribute_all_devices,
     .claims = {CLAIMX("claim-0", ALLREQ("req-0", "class-a"), CONSTRAINTS(MATCH("numa")))},
     .classes = {CLASS_A, CLASS_B}, .slices = {TWO_ATTR_DEVS(A_NUMA("1"), A_NUMA("2"))},
     .error = "claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
              "because a claim constraint would not be satisfied")

CASE(partitionable_all_mode_constraint_must_error_with_reserved_counter,
     .features = "PartitionableDevices",
     .claims = {CLAIMX("claim-0", ALLREQ("req-0", "class-a"), CONSTRAINTS(MATCH("numa")))},
     .classes = {CLASS_A},
     .slices = {SLICEX("slice-1", "'nodeName':'node-1'", "pool-1", "1", "2", "driver-a",
                       ",'devices':[" DEVX("device-1", ATTRS(A_NUMA("1"))) "," DEVX(
                           "device-2",
                           ATTRS(A_NUMA("2")) "," COUNTERS1("counter-set-1", "c", "1")) "]"),
                SLICEX("slice-2", "'nodeName':'node-1'", "pool-1", "1", "2", "driver-a",
                       ",'sharedCounters':[" CSET("counter-set-1", "c", "1") "]")},
     .error = "claim default/claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
              "because a claim constraint would not be satisfied")

CASE(with_constraint_not_matching_string_attribute,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "2"),
                       CONSTRAINTS(MATCH("stringAttribute")))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {TWO_ATTR_DEVS(A_STR("stringAttributeValue"), A_STR("stringAttributeValue2"))},
     .expect = "")

CASE(with_constraint_not_matching_bool_attribute,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "2"),
                       CONSTRAINTS(MATCH("boolAttribute")))},
     .classes = {CLASS_A, CLASS_B}, .slices = {TWO_ATTR_DEVS(A_BOOL("true"), A_BOOL("false"))},
     .expect = "")

CASE(with_constraint_not_matching_version_attribute,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "2"),
                       CONSTRAINTS(MATCH("driverVersion")))},
     .classes = {CLASS_A, CLASS_B}, .slices = {TWO_ATTR_DEVS(A_VER("1.0.0"), A_VER("2.0.0"))},
     .expect = "")

CASE(with_constraint_for_request,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a", "1"),
                       CONSTRAINTS(MATCH_FOR("req-0", "driverVersion")))},
     .classes = {CLASS_A, CLASS_B}, .slices = {TWO_ATTR_DEVS(A_VER("1.0.0"), A_VER("2.0.0"))},
     .expect = R0_R1)

CASE(with_constraint_for_request_retry,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a", "1"),
                       CONSTRAINTS(MATCH_FOR("req-0",
                                             "driverVersion") "," MATCH("stringAttribute")))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", ATTRS(A_VER("1.0.0") "," A_STR("a"))) "," DEVX(
                          "device-2", ATTRS(A_VER("2.0.0") "," A_STR(
                                          "b"))) "," DEVX("device-3",
                                                          ATTRS(A_VER("3.0.0") "," A_STR("b"))))},
     .expect = "[req-0:driver-a/pool-1/device-2 req-1:driver-a/pool-1/device-3] @node-1")

CASE(with_class_device_config, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_CFG("class-a", "driver-a", "classAttribute")},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = R0_D1 " {class:*:{`classAttribute`:`classAttributeValue`}}")

#define MULTI_DEV3(slice, node, pool, driver)                                                      \
    SLICE(slice, node, pool, driver, DEV("device-0") "," DEV("device-1") "," DEV("device-2"))

CASE(with_class_device_config_with_multiple_request_and_configs,
     .claims = {CLAIM("claim-0",
                      REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a",
                                                           "1") "," REQ("req-2", "class-b", "1"))},
     .classes = {CLASS_CFG("class-a", "driver-a", "classAttribute-A"),
                 CLASS_CFG("class-b", "driver-b", "classAttribute-B")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEV("device-0") "," DEV("device-1")),
                ONE_DEV("slice-2", "node-1", "pool-1", "driver-b")},
     .expect = "[req-0:driver-a/pool-1/device-0 req-1:driver-a/pool-1/device-1 "
               "req-2:driver-b/pool-1/device-1] @node-1 "
               "{class:req-0,req-1:{`classAttribute-A`:`classAttribute-AValue`} "
               "class:req-2:{`classAttribute-B`:`classAttribute-BValue`}}")

#define CLAIM_CFG(reqs, attr)                                                                      \
    ",'config':[{" reqs "'opaque':{'driver':'driver-a','parameters':{'" attr "':'" attr "Value'}}" \
    "}]"

CASE(with_claim_config_for_two_requests,
     .claims = {CLAIMX("claim-0",
                       REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a",
                                                            "1") "," REQ("req-2", "class-a", "1"),
                       CLAIM_CFG("'requests':['req-0','req-1'],", "deviceAttribute"))},
     .classes = {CLASS_A}, .slices = {MULTI_DEV3("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-0 req-1:driver-a/pool-1/device-1 "
               "req-2:driver-a/pool-1/device-2] @node-1 "
               "{claim:req-0,req-1:{`deviceAttribute`:`deviceAttributeValue`}}")

CASE(claim_with_device_config,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "1"), CLAIM_CFG("", "deviceAttribute"))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = R0_D1 " {claim:*:{`deviceAttribute`:`deviceAttributeValue`}}")

CASE(unknown_selector,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", ",'selectors':[{}]"))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "CEL expression empty (unsupported selector type?)")

CASE(unknown_allocation_mode,
     .claims = {CLAIM("claim-0", "{'name':'req-0','exactly':{'deviceClassName':'class-a',"
                                 "'allocationMode':'future-mode','count':1}}")},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "unsupported count mode future-mode")

CASE(unknown_constraint,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "1"), CONSTRAINTS("{}"))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "empty constraint (unsupported constraint type?)")

CASE(invalid_CEL_one_device,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", SEL("noSuchVar")))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "undeclared reference")

CASE(invalid_CEL_one_device_class, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {"{" RES "'kind':'DeviceClass','metadata':{'name':'class-a'},'spec':{"
                 "'selectors':[{'cel':{'expression':'noSuchVar'}}]}}"},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "undeclared reference")

CASE(invalid_CEL_all_devices,
     .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", SEL("noSuchVar")))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "undeclared reference")

CASE(too_many_devices_single_request, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "500"))},
     .classes = {CLASS_A}, .error = "exceeds the claim limit")

CASE(many_devices_okay, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "32"))},
     .classes = {CLASS_A}, .expect = "")

CASE(too_many_devices_total,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "32") "," REQ("req-1", "class-a", "1"))},
     .classes = {CLASS_A}, .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", "#DEVS33#")},
     .error = "exceeds the claim limit")

CASE(exact_count_total_overflows_claim_limit,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "4611686018427387904") "," REQ(
                                     "req-1", "class-a", "4611686018427387904"))},
     .classes = {CLASS_A}, .error = "exceeds the claim limit")

CASE(exact_count_total_would_wrap_to_zero,
     .claims = {CLAIM(
         "claim-0",
         REQ("req-0", "class-a", "4611686018427387904") "," REQ(
             "req-1", "class-a",
             "4611686018427387904") "," REQ("req-2", "class-a",
                                            "4611686018427387904") "," REQ("req-3", "class-a",
                                                                           "4611686018427387904"))},
     .classes = {CLASS_A}, .error = "exceeds the claim limit")

CASE(exact_count_sum_exceeds_claim_limit,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "20") "," REQ("req-1", "class-a", "20"))},
     .classes = {CLASS_A},
     .error = "claim default/claim-0, request req-1: adding 20 devices exceeds the claim limit of "
              "32, with 20 already accounted for")

CASE(all_devices_invalid_CEL, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "500"))},
     .classes = {CLASS_A}, .error = "exceeds the claim limit")

CASE(prioritized_list_first_unavailable, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO("req-0", SUB("subReq-0", "class-b",
                                                   "1") "," SUB("subReq-1", "class-a", "1")))},
     .classes = {CLASS_A, CLASS_B}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-1] @node-1")

CASE(prioritized_list_non_available, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO("req-0", SUB("subReq-0", "class-b",
                                                   "2") "," SUB("subReq-1", "class-a", "2")))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a"),
                ONE_DEV("slice-2", "node-1", "pool-2", "driver-b")},
     .expect = "")

#define CLAIM_CFG2(r1, a1, r2, a2)                                                                 \
    ",'config':[{'requests':['" r1 "'],'opaque':{'driver':'driver-a','parameters':{'" a1 "':'" a1  \
    "Value'}}},{'requests':['" r2 "'],'opaque':{'driver':'driver-b','parameters':{'" a2 "':'" a2   \
    "Value'}}}]"

CASE(prioritized_list_device_config, .features = "PrioritizedList",
     .claims = {CLAIMX("claim-0",
                       PRIO("req-0",
                            SUB("subReq-0", "class-a", "1") "," SUB("subReq-1", "class-b", "2")),
                       CLAIM_CFG2("req-0/subReq-0", "foo", "req-0/subReq-1", "bar"))},
     .classes = {CLASS_A, CLASS_B}, .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-b")},
     .expect = "[req-0/subReq-1:driver-b/pool-1/device-1 req-0/subReq-1:driver-b/pool-1/device-2] "
               "@node-1 {claim:*:{`bar`:`barValue`}}")

CASE(prioritized_list_class_config, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO("req-0", SUB("subReq-0", "class-a",
                                                   "2") "," SUB("subReq-1", "class-b", "2")))},
     .classes = {CLASS_CFG("class-a", "driver-a", "foo"), CLASS_CFG("class-b", "driver-b", "bar")},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-b"),
                SLICE("slice-2", "node-1", "pool-2", "driver-a", DEV("device-3"))},
     .expect = "[req-0/subReq-1:driver-b/pool-1/device-1 req-0/subReq-1:driver-b/pool-1/device-2] "
               "@node-1 {class:*:{`bar`:`barValue`}}")

#define PRIO_AB PRIO("req-0", SUB("subReq-0", "class-a", "1") "," SUB("subReq-1", "class-b", "1"))

CASE(claim_config_scoped_to_subrequests_of_one_request, .features = "PrioritizedList",
     .claims = {CLAIMX("claim-0", PRIO_AB "," REQ("req-1", "class-a", "1"),
                       CLAIM_CFG("'requests':['req-0/subReq-0','req-0/subReq-1'],", "scoped"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEV("device-0") "," DEV("device-1"))},
     .expect = "[req-0/subReq-0:driver-a/pool-1/device-0 req-1:driver-a/pool-1/device-1] @node-1 "
               "{claim:req-0/subReq-0,req-0/subReq-1:{`scoped`:`scopedValue`}}")

CASE(claim_config_covering_all_requests_is_cleared, .features = "PrioritizedList",
     .claims = {CLAIMX("claim-0", PRIO_AB "," REQ("req-1", "class-a", "1"),
                       CLAIM_CFG("'requests':['req-0/subReq-0','req-1'],", "all"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEV("device-0") "," DEV("device-1"))},
     .expect = "[req-0/subReq-0:driver-a/pool-1/device-0 req-1:driver-a/pool-1/device-1] @node-1 "
               "{claim:*:{`all`:`allValue`}}")

CASE(prioritized_list_subrequests_with_expressions, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", MEM_GE("1Gi")) "," PRIO(
                                     "req-1", SUBX("subReq-0", "class-a", "1",
                                                   MEM_GE("4Gi")) "," SUBX("subReq-1", "class-a",
                                                                           "2", MEM_GE("2Gi"))))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MEMDEV("device-1", "2Gi") "," MEMDEV("device-2", "2Gi") "," MEMDEV("device-3",
                                                                                         "1Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-3 req-1/subReq-1:driver-a/pool-1/device-1 "
               "req-1/subReq-1:driver-a/pool-1/device-2] @node-1")

#define MEMVER(name, q, v) DEVX(name, "'capacity':{'memory':{'value':'" q "'}}," ATTRS(A_VER(v)))

CASE(prioritized_list_subrequests_with_constraints_ref_parent_request,
     .features = "PrioritizedList",
     .claims = {CLAIMX("claim-0",
                       REQX("req-0", "class-a", "1", MEM_GE("8Gi")) "," PRIO(
                           "req-1", SUBX("subReq-0", "class-a", "1", MEM_GE("2Gi")) "," SUBX(
                                        "subReq-1", "class-a", "1", MEM_GE("1Gi"))),
                       ",'constraints':[{'requests':['req-0','req-1'],'matchAttribute':'driver-a/"
                       "driverVersion'}]")},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MEMVER("device-1", "8Gi", "1.0.0")),
                SLICE("slice-2", "node-1", "pool-2", "driver-a",
                      MEMVER("device-2", "2Gi", "2.0.0") "," MEMVER("device-3", "1Gi", "1.0.0"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1/subReq-1:driver-a/pool-2/device-3] @node-1")

CASE(prioritized_list_subrequests_with_constraints_ref_sub_request, .features = "PrioritizedList",
     .claims = {CLAIMX("claim-0",
                       REQX("req-0", "class-a", "1", MEM_GE("8Gi")) "," PRIO(
                           "req-1", SUBX("subReq-0", "class-a", "1", MEM_GE("2Gi")) "," SUBX(
                                        "subReq-1", "class-a", "1", MEM_GE("1Gi"))),
                       ",'constraints':[{'requests':['req-0','req-1/subReq-0'],'matchAttribute':"
                       "'driver-a/driverVersion'}]")},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MEMVER("device-1", "8Gi", "1.0.0")),
                SLICE("slice-2", "node-1", "pool-2", "driver-a",
                      MEMVER("device-2", "2Gi", "2.0.0"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1/subReq-1:driver-a/pool-2/device-2] @node-1")

CASE(prioritized_list_subrequests_with_allocation_mode_all, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0",
                      PRIO("req-0",
                           SUB_ALL("subReq-0", "class-a") "," SUB("subReq-1", "class-a", "1")))},
     .classes = {CLASS_A}, .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .allocated = {"driver-a/pool-1/device-1"},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-2] @node-1")

CASE(prioritized_list_allocation_mode_all_multiple_requests, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0",
                      REQ("req-0", "class-a", "1") "," PRIO(
                          "req-1",
                          SUB_ALL("subReq-0", "class-a") "," SUB("subReq-1", "class-a", "1")))},
     .classes = {CLASS_A}, .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1/subReq-1:driver-a/pool-1/device-2] @node-1")

CASE(prioritized_list_disabled,
     .claims = {CLAIM("claim-0", PRIO("req-0", SUB("subReq-0", "class-a", "1")))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "claim default/claim-0, request req-0: has subrequests, but the DRAPrioritizedList "
              "feature is disabled")

CASE(prioritized_list_multi_request, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", REQX("req-1", "class-a", "1", MEM_GE("8Gi")) "," PRIO(
                                     "req-0", SUBX("subReq-0", "class-a", "1",
                                                   MEM_GE("8Gi")) "," SUBX("subReq-1", "class-a",
                                                                           "1", MEM_GE("4Gi"))))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", MEMDEV("device-1", "8Gi")),
                SLICE("slice-2", "node-1", "pool-2", "driver-a", MEMDEV("device-2", "4Gi"))},
     .expect = "[req-1:driver-a/pool-1/device-1 req-0/subReq-1:driver-a/pool-2/device-2] @node-1")

CASE(prioritized_list_with_backtracking, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0",
                      PRIO("req-0", SUBX("subReq-0", "class-a", "1", MEM_GE("8Gi")) "," SUBX(
                                        "subReq-1", "class-a", "1",
                                        MEM_GE("4Gi"))) "," REQX("req-1", "class-a", "1",
                                                                 MEM_GE("8Gi")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", MEMDEV("device-1", "8Gi")),
                SLICE("slice-2", "node-1", "pool-2", "driver-a", MEMDEV("device-2", "4Gi"))},
     .expect = "[req-0/subReq-1:driver-a/pool-2/device-2 req-1:driver-a/pool-1/device-1] @node-1")

CASE(prioritized_list_too_many_in_first_subrequest, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO("req-0", SUB("subReq-0", "class-b",
                                                   "500") "," SUB("subReq-1", "class-a", "1")))},
     .classes = {CLASS_A, CLASS_B}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-1] @node-1")

CASE(prioritized_list_minimum_sum_exceeds_claim_limit, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0",
                      REQ("req-0", "class-a",
                          "20") "," PRIO("req-1", SUB("subReq-0", "class-a",
                                                      "20") "," SUB("subReq-1", "class-a", "24")))},
     .classes = {CLASS_A},
     .error = "claim default/claim-0, request req-1: adding 20 devices exceeds the claim limit")

/* math.MaxInt is not exact in a JSON double (cJSON): the largest double below it stands in. */
CASE(prioritized_list_overflowing_first_subrequest_is_pruned, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1") "," PRIO(
                                     "req-1", SUB("subReq-0", "class-a",
                                                  "9223372036854774784") "," SUB("subReq-1",
                                                                                 "class-a", "1")))},
     .classes = {CLASS_A}, .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1/subReq-1:driver-a/pool-1/device-2] @node-1",
     .steps = 8)

#define PSLICE_DEV(name, pool, count, driver, devices)                                             \
    SLICEX(name, "'nodeName':'node-1'", pool, "1", count, driver, ",'devices':[" devices "]")
#define PSLICE_CS(name, pool, count, driver, sets)                                                 \
    SLICEX(name, "'nodeName':'node-1'", pool, "1", count, driver, ",'sharedCounters':[" sets "]")

CASE(partitionable_devices_single_device, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1", COUNTERS1("counter-set-1", "memory", "4Gi"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "memory", "8Gi"))},
     .expect = R0_D1)

CASE(partitionable_devices_counter_quantities_are_not_modified, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .allocated = {"driver-a/pool-1/device-1"}, .classes = {CLASS_A},
     .slices =
         {PSLICE_DEV(
              "slice-1", "pool-1", "2", "driver-a",
              DEVX("device-1", COUNTERS1("counter-set-1", "c", "9000000000000000000")) "," DEVX(
                  "device-2", COUNTERS1("counter-set-1", "c", "1"))),
          PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                    CSET("counter-set-1", "c", "10000000000000000000"))},
     .expect = "[req-0:driver-a/pool-1/device-2] @node-1")

CASE(partitionable_devices_counter_cache_scoped_by_pool_ID, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-1", REQ("req-1", "class-b", "1"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1", COUNTERS1("counter-set-1", "c", "1"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "c", "1")),
                PSLICE_DEV("slice-3", "pool-1", "2", "driver-b",
                           DEVX("device-2", COUNTERS1("counter-set-1", "c", "2"))),
                PSLICE_CS("slice-4", "pool-1", "2", "driver-b", CSET("counter-set-1", "c", "2"))},
     .expect = R0_D1 "; [req-1:driver-b/pool-1/device-2] @node-1")

CASE(partitionable_devices_counter_cache_not_crossed_between_driver_schemas,
     .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-1", REQ("req-1", "class-b", "1"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1", COUNTERS1("counter-set-1", "c", "1"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "c", "1")),
                PSLICE_DEV("slice-3", "pool-1", "2", "driver-b",
                           DEVX("device-2", COUNTERS1("counter-set-2", "d", "2"))),
                PSLICE_CS("slice-4", "pool-1", "2", "driver-b", CSET("counter-set-2", "d", "1"))},
     .expect = "")

#define TAINT_NOSCHED "{'key':'taint-key','value':'taint-value','effect':'NoSchedule'}"
#define TAINT_NOEXEC "{'key':'taint-key','value':'taint-value-2','effect':'NoExecute'}"
#define TAINT_NONE "{'key':'taint-key','value':'taint-value','effect':'None'}"
#define TAINTS(...) "'taints':[" __VA_ARGS__ "]"

CASE(partitionable_devices_taint_releases_counter, .features = "PartitionableDevices DeviceTaints",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1",
                                TAINTS(TAINT_NOSCHED) "," COUNTERS1(
                                    "counter-set-1", "c", "1")) "," DEVX("device-2",
                                                                         COUNTERS1("counter-set-1",
                                                                                   "c", "1"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "c", "1"))},
     .expect = "[req-0:driver-a/pool-1/device-2] @node-1")

CASE(partitionable_devices_constraint_releases_counter, .features = "PartitionableDevices",
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "2"),
                       CONSTRAINTS(MATCH("stringAttribute")))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV(
                    "slice-1", "pool-1", "2", "driver-a",
                    DEVX("device-1",
                         ATTRS(A_STR("red")) "," COUNTERS1(
                             "counter-set-1", "c",
                             "1")) "," DEVX("device-2",
                                            ATTRS(A_STR("blue")) "," COUNTERS1(
                                                "counter-set-1", "c",
                                                "1")) "," DEVX("device-3",
                                                               ATTRS(A_STR("blue")) "," COUNTERS1(
                                                                   "counter-set-1", "c", "1"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "c", "2"))},
     .expect = "[req-0:driver-a/pool-1/device-2 req-0:driver-a/pool-1/device-3] @node-1")

#define KIND(v) "'kind':{'string':'" v "'}"
#define KIND_IS(v) SEL("device.attributes[`driver-a`].kind == `" v "`")
#define MULTI "'allowMultipleAllocations':true"

CASE(partitionable_consumable_capacity_backtrack_releases_counter,
     .features = "PartitionableDevices ConsumableCapacity",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", KIND_IS("shared")) "," REQX(
                                     "req-1", "class-a", "1", KIND_IS("counteronly")))},
     .classes = {CLASS_A},
     .slices =
         {PSLICE_DEV(
              "slice-1", "pool-1", "2", "driver-a",
              DEVX("device-1",
                   ATTRS(KIND("shared")) "," MULTI "," COUNTERS1(
                       "counter-set-1", "c",
                       "1")) "," DEVX("device-2",
                                      ATTRS(KIND(
                                          "shared"))) "," DEVX("device-3",
                                                               ATTRS(KIND("counteronly")) "," COUNTERS1(
                                                                   "counter-set-1", "c", "1"))),
          PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "c", "1"))},
     .expect = "[req-0:driver-a/pool-1/device-2 req-1:driver-a/pool-1/device-3] @node-1")

#define CAPREQ(q) ",'capacity':{'requests':{'capacity-0':'" q "'}}"
#define CAP0(q) "'capacity':{'capacity-0':{'value':'" q "'}}"

CASE(consumable_capacity_rejection_rolls_back_constraints,
     .features = "ConsumableCapacity PrioritizedList",
     .claims =
         {CLAIM("claim-0",
                REQX("req-0", "class-a", "1",
                     CAPREQ("2") SEL("device.attributes[`driver-a`].stringAttribute == `cap`"))),
          CLAIMX("claim-1",
                 PRIO("req-0",
                      "{'name':'subReq-0','deviceClassName':'class-a','allocationMode':'All'" SEL(
                          "device.attributes[`driver-a`].stringAttribute == `cap`")
                          CAPREQ("2") "}," SUBX("subReq-1", "class-a", "1",
                                                SEL("device.attributes[`driver-a`]."
                                                    "stringAttribute == `fb`"))),
                 CONSTRAINTS(MATCH("stringAttribute")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", CAP0("2") "," ATTRS(A_STR("cap")) "," MULTI) "," DEVX(
                          "device-2", ATTRS(A_STR("fb"))))},
     .expect = "[req-0:driver-a/pool-1/device-1+share{capacity-0=2}] @node-1; "
               "[req-0/subReq-1:driver-a/pool-1/device-2] @node-1")

CASE(
    partitionable_empty_capacity_multiple_share_backtrack_keeps_counter_ownership,
    .features = "PartitionableDevices ConsumableCapacity",
    .claims =
        {CLAIM("claim-0", REQX("req-0", "class-a", "1", KIND_IS("shared"))),
         CLAIMX(
             "claim-1",
             REQX(
                 "req-1", "class-a", "1",
                 SEL("device.attributes[`driver-a`].kind == `shared` || "
                     "device.attributes[`driver-a`].kind == `fallback`")) "," REQX("req-2",
                                                                                   "class-a", "1",
                                                                                   KIND_IS(
                                                                                       "gate")) "," REQX("req-3",
                                                                                                         "class-a",
                                                                                                         "1",
                                                                                                         KIND_IS(
                                                                                                             "shared")),
             ",'constraints':[{'matchAttribute':'driver-a/stringAttribute','requests':["
             "'req-1','req-2']}]")},
    .classes = {CLASS_A},
    .slices =
        {PSLICE_DEV(
             "slice-1", "pool-1", "2", "driver-a",
             DEVX("device-1",
                  ATTRS(KIND("shared") "," A_STR("red")) "," MULTI "," COUNTERS1(
                      "counter-set-1", "c",
                      "1")) "," DEVX("device-2",
                                     ATTRS(KIND("fallback") "," A_STR(
                                         "blue"))) "," DEVX("device-3",
                                                            ATTRS(KIND("gate") "," A_STR("blue")))),
         PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "c", "1"))},
    .expect = "[req-0:driver-a/pool-1/device-1+share] @node-1; [req-1:driver-a/pool-1/device-2 "
              "req-2:driver-a/pool-1/device-3 req-3:driver-a/pool-1/device-1+share] @node-1")

/* device(name, fromCounters, nil).withDeviceCounterConsumption(...): capacity = the counters */
#define FROM_COUNTERS(name, set, cname, v)                                                         \
    DEVX(name, "'capacity':{'" cname "':{'value':'" v "'}}," COUNTERS1(set, cname, v))
#define MEM_COUNTER_DEVS                                                                           \
    FROM_COUNTERS("device-1", "counter-set-1", "memory", "4Gi")                                    \
    "," FROM_COUNTERS("device-2", "counter-set-1", "memory",                                       \
                      "6Gi") "," FROM_COUNTERS("device-3", "counter-set-1", "memory", "4Gi")

CASE(partitionable_devices_prioritized_list, .features = "PrioritizedList PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1") "," PRIO(
                                     "req-1", SUBX("subReq-0", "class-a", "1",
                                                   MEM_GE("6Gi")) "," SUBX("subReq-1", "class-a",
                                                                           "1", MEM_GE("4Gi"))))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a", MEM_COUNTER_DEVS),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "memory", "8Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1/subReq-1:driver-a/pool-1/device-3] @node-1")

CASE(partitionable_devices_multiple_devices, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a", MEM_COUNTER_DEVS),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "memory", "8Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1:driver-a/pool-1/device-3] @node-1")

#define TWO_SETS(name, m, c)                                                                       \
    DEVX(name,                                                                                     \
         "'consumesCounters':[{'counterSet':'counter-set-1','counters':{'memory':{'value':'" m     \
         "'}}},{'counterSet':'counter-set-2','counters':{'cpus':{'value':'" c "'}}}]")

CASE(partitionable_devices_multiple_capacity_pools,
     .features = "PrioritizedList PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1") "," PRIO(
                                     "req-1", SUBX("subReq-0", "class-a", "1",
                                                   MEM_GE("6Gi")) "," SUBX("subReq-1", "class-a",
                                                                           "1", MEM_GE("4Gi"))))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           "{'name':'device-1','capacity':{'memory':{'value':'4Gi'},'cpus':{"
                           "'value':'4'}},'consumesCounters':[{'counterSet':'counter-set-1',"
                           "'counters':{'memory':{'value':'4Gi'}}},{'counterSet':'counter-set-2',"
                           "'counters':{'cpus':{'value':'4'}}}]},"
                           "{'name':'device-2','capacity':{'memory':{'value':'6Gi'},'cpus':{"
                           "'value':'6'}},'consumesCounters':[{'counterSet':'counter-set-1',"
                           "'counters':{'memory':{'value':'6Gi'}}},{'counterSet':'counter-set-2',"
                           "'counters':{'cpus':{'value':'6'}}}]},"
                           "{'name':'device-3','capacity':{'memory':{'value':'4Gi'},'cpus':{"
                           "'value':'4'}},'consumesCounters':[{'counterSet':'counter-set-1',"
                           "'counters':{'memory':{'value':'4Gi'}}},{'counterSet':'counter-set-2',"
                           "'counters':{'cpus':{'value':'4'}}}]}"),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "memory", "18Gi") "," CSET("counter-set-2", "cpus",
                                                                           "8"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-1/subReq-1:driver-a/pool-1/device-3] @node-1")

#define MC(name, m1, c1, m2, c2)                                                                   \
    "{'name':'" name "','consumesCounters':[{'counterSet':'counter-set-1','counters':{'memory':{"  \
    "'value':'" m1 "'},'cpus':{'value':'" c1 "'}}},{'counterSet':'counter-set-2','counters':{"     \
    "'cpus':{'value':'" c2 "'},'memory':{'value':'" m2 "'}}}]}"

CASE(partitionable_devices_multiple_counters, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           MC("device-1", "4Gi", "6", "2Gi",
                              "4") "," MC("device-2", "6Gi", "4", "6Gi",
                                          "6") "," MC("device-3", "4Gi", "4", "4Gi", "4")),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          "{'name':'counter-set-1','counters':{'cpus':{'value':'8'},'memory':{"
                          "'value':'18Gi'}}},{'name':'counter-set-2','counters':{'cpus':{'value':"
                          "'12'},'memory':{'value':'18Gi'}}}")},
     .expect = "[req-0:driver-a/pool-1/device-2 req-1:driver-a/pool-1/device-3] @node-1")

#define CPU_MEM(name, c, m)                                                                        \
    "{'name':'" name "','capacity':{'cpus':{'value':'" c "'},'memory':{'value':'" m "'}},"         \
    "'consumesCounters':[{'counterSet':'counter-set-1','counters':{'cpus':{'value':'" c "'},"      \
    "'memory':{'value':'" m "'}}}]}"
#define CSET_CPU_MEM                                                                               \
    "{'name':'counter-set-1','counters':{'cpus':{'value':'8'},'memory':{'value':'18Gi'}}}"

CASE(partitionable_devices_multiple_pools, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           CPU_MEM("device-1", "6", "4Gi") "," CPU_MEM(
                               "device-2", "4", "6Gi") "," CPU_MEM("device-3", "4", "4Gi")),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET_CPU_MEM),
                PSLICE_DEV("slice-3", "pool-2", "2", "driver-a",
                           CPU_MEM("device-1", "6", "4Gi") "," CPU_MEM(
                               "device-2", "1", "7Gi") "," CPU_MEM("device-3", "1", "7Gi")),
                PSLICE_CS("slice-4", "pool-2", "2", "driver-a", CSET_CPU_MEM)},
     .allocated = {"driver-a/pool-1/device-2", "driver-a/pool-1/device-3",
                   "driver-a/pool-2/device-1"},
     .expect = "[req-0:driver-a/pool-2/device-2 req-1:driver-a/pool-2/device-3] @node-1")

CASE(partitionable_devices_unused_counters_in_counter_set, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "2"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1", COUNTERS1("counter-set-1", "memory", "5Gi")) "," DEVX(
                               "device-2", COUNTERS1("counter-set-1", "memory",
                                                     "4Gi")) "," DEVX("device-3",
                                                                      COUNTERS1("counter-set-1",
                                                                                "memory", "4Gi"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          "{'name':'counter-set-1','counters':{'memory':{'value':'8Gi'},'unused':{"
                          "'value':'1Gi'}}}")},
     .expect = "[req-0:driver-a/pool-1/device-2 req-0:driver-a/pool-1/device-3] @node-1")

/* sliceWithCounterSets with the plain pool name: a pool of count 1 in two slices (same name) */
CASE(partitionable_devices_no_capacity_available, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "1", "driver-a",
                           FROM_COUNTERS("device-1", "counter-set-1", "memory",
                                         "4Gi") "," FROM_COUNTERS("device-2", "counter-set-1",
                                                                  "memory", "16Gi")),
                PSLICE_CS("slice-2", "pool-1", "1", "driver-a",
                          CSET("counter-set-1", "memory", "18Gi"))},
     .allocated = {"driver-a/pool-1/device-2"}, .expect = "")

CASE(partitionable_devices_overallocated_capacity_pool, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "1", "driver-a",
                           FROM_COUNTERS("device-1", "counter-set-1", "memory",
                                         "4Gi") "," FROM_COUNTERS("device-2", "counter-set-1",
                                                                  "memory", "20Gi")),
                PSLICE_CS("slice-2", "pool-1", "1", "driver-a",
                          CSET("counter-set-1", "memory", "18Gi"))},
     .allocated = {"driver-a/pool-1/device-2"}, .expect = "")

CASE(partitionable_devices_disabled_device_consumes_counters,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "1", "driver-a",
                           DEVX("device-1", COUNTERS1("counter-set-1", "memory", "4Gi"))),
                PSLICE_CS("slice-2", "pool-1", "1", "driver-a",
                          CSET("counter-set-1", "memory", "18Gi"))},
     .expect = "")

CASE(partitionable_devices_disabled_other_device_do_not_consume_counters,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1",
                                COUNTERS1("counter-set-1", "memory", "4Gi")) "," DEV("device-2")),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "memory", "18Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-2] @node-1")

#define PER_DEVICE "'perDeviceNodeSelection':true"

CASE(partitionable_devices_disabled_per_device_node_selection,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {SLICE_AT("slice-1", PER_DEVICE, "pool-1", "driver-a",
                         DEVX("device-2", "'nodeName':'node-1'"))},
     .expect = "")

#define PD_SLICE(name, pool, driver, devices)                                                      \
    SLICEX(name, PER_DEVICE, pool, "1", "2", driver, ",'devices':[" devices "]")
#define PD_CS(name, pool, driver, sets)                                                            \
    SLICEX(name, PER_DEVICE, pool, "1", "2", driver, ",'sharedCounters':[" sets "]")
#define MEMC(name, v, where)                                                                       \
    DEVX(name, "'capacity':{'memory':{'value':'" v                                                 \
               "'}}," COUNTERS1("counter-set-1", "memory", v) "," where)

CASE(partitionable_devices_per_device_node_selection_nodename,
     .features = "PartitionableDevices PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO("req-0", SUBX("subReq-0", "class-a", "1",
                                                    MEM_GE("6Gi")) "," SUBX("subReq-1", "class-a",
                                                                            "1", MEM_GE("4Gi"))))},
     .classes = {CLASS_A},
     .slices = {PD_SLICE("slice-1", "pool-1", "driver-a",
                         MEMC("device-1", "4Gi", "'nodeName':'node-1'") "," MEMC(
                             "device-2", "6Gi", "'nodeName':'node-2'")),
                PD_CS("slice-2", "pool-1", "driver-a", CSET("counter-set-1", "memory", "18Gi"))},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-1] @node-1")

CASE(partitionable_devices_per_device_node_selection_node_selector,
     .features = "PartitionableDevices PrioritizedList",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PD_SLICE("slice-1", "pool-1", "driver-a",
                         MEMC("device-1", "4Gi", NODESEL_LABEL("region", "region-1"))),
                PD_CS("slice-2", "pool-1", "driver-a", CSET("counter-set-1", "memory", "18Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1] @E(region In region-1)")

#define MEMC2(name) FROM_COUNTERS(name, "counter-set-2", "memory", "4Gi")

CASE(partitionable_devices_per_device_node_selection_node_selector_multiple_devices,
     .features = "PartitionableDevices PrioritizedList",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "3") "," REQ("req-1", "class-b", "3"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {PD_SLICE("slice-1", "pool-1", "driver-a",
                         MEMC("device-1", "4Gi", NODESEL_LABEL("region", "region-1")) "," MEMC(
                             "device-2", "4Gi", "'nodeName':'node-1'") "," MEMC("device-3", "4Gi",
                                                                                "'allNodes':true")),
                PD_CS("slice-2", "pool-1", "driver-a", CSET("counter-set-1", "memory", "18Gi")),
                PSLICE_DEV("slice-3", "pool-2", "2", "driver-b",
                           MEMC2("device-1") "," MEMC2("device-2") "," MEMC2("device-3")),
                PSLICE_CS("slice-4", "pool-2", "2", "driver-b",
                          CSET("counter-set-2", "memory", "12Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-1/device-2 "
               "req-0:driver-a/pool-1/device-3 req-1:driver-b/pool-2/device-1 "
               "req-1:driver-b/pool-2/device-2 req-1:driver-b/pool-2/device-3] @node-1")

#define TOL_NOEXEC                                                                                 \
    ",'tolerations':[{'operator':'Equal','key':'taint-key','value':'taint-value-2','effect':"      \
    "'NoExecute'}]"
#define TOL_NOSCHED ",'tolerations':[{'operator':'Exists','key':'taint-key','effect':'NoSchedule'}]"
#define TAINTED_TWO                                                                                \
    SLICE("slice-1", "node-1", "pool-1", "driver-a",                                               \
          DEVX("device-1", TAINTS(TAINT_NOSCHED)) "," DEVX("device-2", TAINTS(TAINT_NOEXEC)))

CASE(tainted_two_devices, .features = "DeviceTaints",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {TAINTED_TWO}, .expect = "")

CASE(tainted_one_device_two_taints, .features = "DeviceTaints",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", TAINTS(TAINT_NOSCHED "," TAINT_NOEXEC)))},
     .expect = "")

CASE(tainted_two_devices_tolerated, .features = "DeviceTaints",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", TOL_NOEXEC))}, .classes = {CLASS_A},
     .slices = {TAINTED_TWO}, .expect = "[req-0:driver-a/pool-1/device-2+tol(taint-key)] @node-1")

CASE(tainted_two_devices_prioritized_list_tolerated, .features = "DeviceTaints PrioritizedList",
     .claims = {CLAIM("claim-0",
                      PRIO("req-0", SUB("subReq-0", "class-a", "1") "," SUBX("subReq-1", "class-a",
                                                                             "1", TOL_NOEXEC)))},
     .classes = {CLASS_A}, .slices = {TAINTED_TWO},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-2+tol(taint-key)] @node-1")

CASE(tainted_no_effect, .features = "DeviceTaints",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", TAINTS(TAINT_NONE)))},
     .expect = R0_D1)

#define TOL_BOTH                                                                                   \
    ",'tolerations':[{'operator':'Exists','key':'taint-key','effect':'NoSchedule'},{'operator':"   \
    "'Equal','key':'taint-key','value':'taint-value-2','effect':'NoExecute'}]"
#define TAINTED_BOTH                                                                               \
    SLICE("slice-1", "node-1", "pool-1", "driver-a",                                               \
          DEVX("device-1", TAINTS(TAINT_NOSCHED "," TAINT_NOEXEC)))
#define TAINTED_ONE                                                                                \
    SLICE("slice-1", "node-1", "pool-1", "driver-a", DEVX("device-1", TAINTS(TAINT_NOSCHED)))

CASE(tainted_one_device_two_taints_both_tolerated, .features = "DeviceTaints",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", TOL_BOTH))}, .classes = {CLASS_A},
     .slices = {TAINTED_BOTH},
     .expect = "[req-0:driver-a/pool-1/device-1+tol(taint-key)+tol(taint-key)] @node-1")

CASE(tainted_disabled, .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A}, .slices = {TAINTED_BOTH}, .expect = R0_D1)

#define PRIO_BA PRIO("req-0", SUB("subReq-0", "class-b", "1") "," SUB("subReq-1", "class-a", "1"))

CASE(tainted_prioritized_list, .features = "DeviceTaints PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO_BA)}, .classes = {CLASS_A, CLASS_B}, .slices = {TAINTED_ONE},
     .expect = "")

CASE(tainted_prioritized_list_disabled, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO_BA)}, .classes = {CLASS_A, CLASS_B}, .slices = {TAINTED_ONE},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-1] @node-1")

CASE(tainted_admin_access, .features = "DeviceTaints AdminAccess",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", ADMIN))},
     .allocated = {"driver-a/pool-1/device-1", "driver-a/pool-1/device-2"}, .classes = {CLASS_A},
     .slices = {TAINTED_ONE}, .expect = "")

CASE(tainted_admin_access_disabled, .features = "AdminAccess",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", ADMIN))},
     .allocated = {"driver-a/pool-1/device-1", "driver-a/pool-1/device-2"}, .classes = {CLASS_A},
     .slices = {TAINTED_ONE}, .expect = "[req-0:driver-a/pool-1/device-1+admin] @node-1")

CASE(tainted_all_devices_single, .features = "DeviceTaints",
     .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))}, .classes = {CLASS_A},
     .slices = {TAINTED_ONE}, .expect = "")

CASE(tainted_all_devices_single_disabled, .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))},
     .classes = {CLASS_A}, .slices = {TAINTED_ONE}, .expect = R0_D1)

CASE(prioritized_list_allocation_mode_all, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0",
                      PRIO("req-0",
                           SUB_ALL("subReq-0", "class-a") "," SUB("subReq-1", "class-a", "1")))},
     .classes = {CLASS_A}, .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .allocated = {"driver-a/pool-1/device-2"},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-1] @node-1")

#define GEN(v) "'generation':{'string':'" v "'}"
#define SUB_ALL_GEN(name, v)                                                                       \
    "{'name':'" name "','deviceClassName':'class-a','allocationMode':'All'" SEL(                   \
        "device.attributes[`driver-a`].generation == `" v "`") "}"
#define PRIO_GEN PRIO("req-0", SUB_ALL_GEN("subReq-0", "v6") "," SUB_ALL_GEN("subReq-1", "v5"))

CASE(prioritized_list_allocation_mode_all_with_selectors, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO_GEN)}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", ATTRS(GEN("v5"))))},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-1] @node-1")

CASE(prioritized_list_allocation_mode_all_with_selectors_multiple_pools,
     .features = "PrioritizedList", .claims = {CLAIM("claim-0", PRIO_GEN)}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", ATTRS(GEN("v5")))),
                SLICE("slice-2", "node-1", "pool-2", "driver-a",
                      DEVX("device-1", ATTRS(GEN("v5"))))},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-1 req-0/subReq-1:driver-a/pool-2/device-1] "
               "@node-1")

CASE(prioritized_list_allocation_mode_all_with_selectors_multiple_pools_across_nodes,
     .features = "PrioritizedList", .claims = {CLAIM("claim-0", PRIO_GEN)}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", ATTRS(GEN("v5")))),
                SLICE("slice-2", "node-2", "pool-2", "driver-a",
                      DEVX("device-1", ATTRS(GEN("v5"))) "," DEVX("device-2", ATTRS(GEN("v6"))))},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-1] @node-1")

#define SELECTED(v) "'selected':{'bool':" v "}"

CASE(prioritized_list_allocation_mode_all_with_selectors_deviceclass_subset,
     .features = "PrioritizedList", .claims = {CLAIM("claim-0", PRIO_GEN)},
     .classes = {"{" RES "'kind':'DeviceClass','metadata':{'name':'class-a'},'spec':{'selectors':[{"
                 "'cel':{'expression':'device.driver == `driver-a` && "
                 "device.attributes[`driver-a`].selected'}}]}}"},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", ATTRS(GEN("v6") "," SELECTED("false"))) "," DEVX(
                          "device-2",
                          ATTRS(GEN("v5") "," SELECTED(
                              "false"))) "," DEVX("device-3",
                                                  ATTRS(GEN("v5") "," SELECTED("true"))))},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-3] @node-1")

/* "[" + req:driver-a/pool/device-i for i in [from, from+n) ... */
static void many(char *buf, size_t len, const char *req, const char *driver, const char *pool,
                 int n, int from)
{
    for (int i = from; i < from + n; i++)
        cat(buf, len, "%s%s:%s/%s/device-%d", buf[0] && buf[strlen(buf) - 1] != '[' ? " " : "", req,
            driver, pool, i);
}

Test(dra_alloc, max_number_devices)
{
    char want[4096] = "[";
    many(want, sizeof want, "req-0", "driver-a", "pool-1", 32, 0);
    cat(want, sizeof want, "] @node-1");
    tcase tc = {.claims = {CLAIM("claim-0", REQ("req-0", "class-a", "32"))},
                .classes = {CLASS_A},
                .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", "#DEVS32#")},
                .expect = want};
    check("max-number-devices", &tc);
}

Test(dra_alloc, exact_count_sum_exactly_fills_claim_limit)
{
    char want[4096] = "[";
    many(want, sizeof want, "req-0", "driver-a", "pool-1", 16, 0);
    many(want, sizeof want, "req-1", "driver-a", "pool-1", 16, 16);
    cat(want, sizeof want, "] @node-1");
    tcase tc = {.claims = {CLAIM("claim-0",
                                 REQ("req-0", "class-a", "16") "," REQ("req-1", "class-a", "16"))},
                .classes = {CLASS_A},
                .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", "#DEVS32#")},
                .expect = want};
    check("exact-count-sum-exactly-fills-claim-limit", &tc);
}

Test(dra_alloc, prioritized_list_max_allocation_limit_request)
{
    char want[4096] = "[";
    many(want, sizeof want, "req-0/subReq-1", "driver-a", "pool-1", 16, 0);
    many(want, sizeof want, "req-1/subReq-1", "driver-a", "pool-1", 16, 16);
    cat(want, sizeof want, "] @node-1");
    tcase tc = {
        .features = "PrioritizedList",
        .claims = {CLAIM("claim-0",
                         PRIO("req-0", SUB("subReq-0", "class-a", "32") "," SUB(
                                           "subReq-1", "class-a",
                                           "16")) "," PRIO("req-1",
                                                           SUB("subReq-0", "class-a", "32") "," SUB(
                                                               "subReq-1", "class-a", "16")))},
        .classes = {CLASS_A},
        .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", "#DEVS64#")},
        .expect = want,
        .steps = 75};
    check("prioritized-list-max-allocation-limit-request", &tc);
}

#define SPECIAL(v) "'special':{'bool':" v "}"
#define SPECIAL_DEV(name, v, cpu)                                                                  \
    "{'name':'" name                                                                               \
    "','attributes':{" SPECIAL(v) "},'consumesCounters':[{'counterSet':"                           \
                                  "'counter-set-1','counters':{'" cpu                              \
                                  "':{'value':'1'}}},{'counterSet':'counter-set-2',"               \
                                  "'counters':{'mem':{'value':'10Gi'}}}]}"

CASE(partitionable_devices_with_attribute_selector, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a",
                                     "2") "," REQX("req-1", "class-a", "1",
                                                   SEL("device.attributes[`driver-a`].special")))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           SPECIAL_DEV("device-1", "true", "cpu1") "," SPECIAL_DEV(
                               "device-2", "false", "cpu2") "," SPECIAL_DEV("device-3", "false",
                                                                            "cpu3")),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          "{'name':'counter-set-1','counters':{'cpu1':{'value':'1'},'cpu2':{"
                          "'value':'1'},'cpu3':{'value':'1'}}},{'name':'counter-set-2',"
                          "'counters':{'mem':{'value':'30Gi'}}}")},
     .expect = "[req-0:driver-a/pool-1/device-2 req-0:driver-a/pool-1/device-3 "
               "req-1:driver-a/pool-1/device-1] @node-1")

#define BC(c, f) "'bindingConditions':['" c "'],'bindingFailureConditions':['" f "']"

CASE(device_binding_conditions, .features = "DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", BC("IsPrepare", "BindingFailed")))},
     .expect = "[req-0:driver-a/pool-1/device-1+bc(IsPrepare)+bfc(BindingFailed)] @node-1")

CASE(binding_conditions_multiple_devices, .features = "DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "2") "," REQ("req-1", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", BC("IsPrepare", "BindingFailed")) "," DEVX(
                          "device-2",
                          BC("IsPrepare2", "BindingFailed2")) "," DEVX("device-3",
                                                                       BC("IsPrepare3",
                                                                          "BindingFailed3")))},
     .expect = "[req-0:driver-a/pool-1/device-1+bc(IsPrepare)+bfc(BindingFailed) "
               "req-0:driver-a/pool-1/device-2+bc(IsPrepare2)+bfc(BindingFailed2) "
               "req-1:driver-a/pool-1/device-3+bc(IsPrepare3)+bfc(BindingFailed3)] @node-1")

CASE(binding_conditions_with_and_without, .features = "DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEV("device-1") "," DEVX("device-2", BC("IsPrepare", "BindingFailed")))},
     .expect = "[req-0:driver-a/pool-1/device-1 "
               "req-1:driver-a/pool-1/device-2+bc(IsPrepare)+bfc(BindingFailed)] @node-1")

CASE(binding_conditions_without_feature_gate,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", BC("IsPrepare", "BindingFailed")))},
     .expect = "")

CASE(node_restriction, .features = "DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {SLICE_AT("slice-1", NODESEL_LABEL("planet", "earth"), "pool-1", "driver-a",
                         DEVX("device-1", "'bindsToNode':true"))},
     .expect = R0_D1)

#define MEM_BC(name, set, v, bc)                                                                   \
    DEVX(name, "'capacity':{'memory':{'value':'" v "'}}," COUNTERS1(set, "memory", v) bc)

CASE(partitionable_devices_with_binding_conditions,
     .features = "PartitionableDevices DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           MEM_BC("device-1", "counter-set-1", "4Gi",
                                  "," BC("IsPrepare", "BindingFailed"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "memory", "8Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1+bc(IsPrepare)+bfc(BindingFailed)] @node-1")

CASE(partitionable_devices_with_binding_conditions_some_devices_no_conditions,
     .features = "PartitionableDevices DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "3"))}, .classes = {CLASS_A},
     .slices =
         {PSLICE_DEV(
              "slice-1", "pool-1", "2", "driver-a",
              MEM_BC("device-1", "counter-set-1", "2Gi",
                     "," BC("IsPrepare",
                            "BindingFailed")) "," MEM_BC("device-2", "counter-set-1", "2Gi",
                                                         "") "," MEM_BC("device-3", "counter-set-1",
                                                                        "4Gi",
                                                                        "," BC("IsReady",
                                                                               "BindingTimeout"))),
          PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "memory", "8Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1+bc(IsPrepare)+bfc(BindingFailed) "
               "req-0:driver-a/pool-1/device-2 "
               "req-0:driver-a/pool-1/device-3+bc(IsReady)+bfc(BindingTimeout)] @node-1")

CASE(partitionable_devices_with_binding_conditions_multi_slices,
     .features = "PartitionableDevices DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "2"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-4", "pool-1", "4", "driver-a",
                           MEM_BC("device-1", "counter-set-1", "4Gi",
                                  "," BC("IsPrepare", "BindingFailed"))),
                PSLICE_CS("slice-3", "pool-1", "4", "driver-a",
                          CSET("counter-set-1", "memory", "8Gi")),
                PSLICE_DEV("slice-2", "pool-1", "4", "driver-a",
                           MEM_BC("device-2", "counter-set-2", "4Gi", "")),
                PSLICE_CS("slice-1", "pool-1", "4", "driver-a",
                          CSET("counter-set-2", "memory", "8Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-2 "
               "req-0:driver-a/pool-1/device-1+bc(IsPrepare)+bfc(BindingFailed)] @node-1")

#define TAINT_KEY1 "'taints':[{'key':'key1','value':'value1','effect':'NoSchedule'}]"
#define TOL_KEY1 ",'tolerations':[{'operator':'Exists','key':'key1','effect':'NoSchedule'}]"

CASE(partitionable_devices_with_binding_conditions_and_taints,
     .features = "PartitionableDevices DeviceBindingAndStatus DeviceTaints",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "2"))}, .classes = {CLASS_A},
     .slices =
         {PSLICE_DEV("slice-1", "pool-1", "1", "driver-a",
                     MEM_BC("device-1", "counter-set-1", "4Gi",
                            "," BC("IsPrepare",
                                   "BindingFailed") "," TAINT_KEY1) "," MEM_BC("device-2",
                                                                               "counter-set-1",
                                                                               "4Gi", "")),
          PSLICE_CS("slice-2", "pool-1", "1", "driver-a", CSET("counter-set-1", "memory", "8Gi"))},
     .expect = "")

CASE(partitionable_devices_with_binding_conditions_and_taints_tolerated,
     .features = "PartitionableDevices DeviceBindingAndStatus DeviceTaints",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "2", TOL_KEY1))}, .classes = {CLASS_A},
     .slices =
         {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                     MEM_BC("device-1", "counter-set-1", "4Gi",
                            "," BC("IsPrepare",
                                   "BindingFailed") "," TAINT_KEY1) "," MEM_BC("device-2",
                                                                               "counter-set-1",
                                                                               "4Gi", "")),
          PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "memory", "8Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1+tol(key1)+bc(IsPrepare)+bfc(BindingFailed) "
               "req-0:driver-a/pool-1/device-2+tol(key1)] @node-1")

CASE(consumable_capacity_disabled_feature, .features = "DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1")))}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "claim default/claim-0, request req-0: has capacity requests, but the "
              "DRAConsumableCapacity feature is disabled")

CASE(consumable_capacity_disabled_feature_with_prioritized_list,
     .features = "PrioritizedList DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", PRIO("req-0", SUBX("subReq-0", "class-a", "1",
                                                    CAPREQ("1")) "," SUBX("subReq-1", "class-a",
                                                                          "1", CAPREQ("1"))))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "claim default/claim-0, subrequest subReq-0: has capacity requests, but the "
              "DRAConsumableCapacity feature is disabled")

#define CLASS_MULTI(v)                                                                             \
    "{" RES "'kind':'DeviceClass','metadata':{'name':'class-a'},'spec':{'selectors':[{'cel':{"     \
    "'expression':'device.driver == `driver-a` && device.allowMultipleAllocations == " v "'}}]}}"
#define CAP1(q) "'capacity':{'capacity-1':{'value':'" q "'}}"

CASE(consumable_capacity_multi_allocatable_device_with_missing_capacity_request,
     .features = "ConsumableCapacity",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1")))}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", CAP1("1") "," MULTI))},
     .expect = "")

CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_with_missing_capacity_request,
     .features = "ConsumableCapacity",
     .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", CAPREQ("1")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", CAP1("1") "," MULTI))},
     .expect = "")

/* withCapacityRequestPolicyRange: default 2, validRange min 2, step 2, max 4 */
#define CAP_RANGE(v)                                                                               \
    "'capacity':{'capacity-0':{'value':'" v "','requestPolicy':{'default':'2','validRange':{"      \
    "'min':'2','step':'2','max':'4'}}}}"
/* withCapacityRequestPolicyValidValues(default, v, extra) */
#define CAP_VALUES(dflt, v, values)                                                                \
    "'capacity':{'capacity-0':{'value':'" v "','requestPolicy':{'default':'" dflt "',"             \
    "'validValues':[" values "]}}}"
#define CC "ConsumableCapacity"
#define R_SHARE(req, dev, amount)                                                                  \
    "[" req ":driver-a/pool-1/" dev "+share{capacity-0=" amount "}] @node-1"
#define MULTIDEV(name, caps) DEVX(name, caps "," MULTI)

CASE(consumable_capacity_multi_allocatable_device_without_capacity_without_capacity_request,
     .features = CC,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-1", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", DEVX("device-1", MULTI))},
     .expect = "[req-0:driver-a/pool-1/device-1+share] @node-1; "
               "[req-0:driver-a/pool-1/device-1+share] @node-1")

CASE(consumable_capacity_multi_allocatable_device_without_policy_without_capacity_request,
     .features = CC,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-1", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP0("1")) "," MULTIDEV("device-2", CAP0("1")))},
     .expect = R_SHARE("req-0", "device-1", "1") "; " R_SHARE("req-0", "device-2", "1"))

CASE(consumable_capacity_multi_allocatable_device_without_policy_without_capacity_request_block,
     .features = CC,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-1", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", MULTIDEV("device-1", CAP0("2")))},
     .expect = "")

CASE(consumable_capacity_multi_allocatable_device_without_policy_with_capacity_request,
     .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1"))),
                CLAIM("claim-1", REQX("req-0", "class-a", "1", CAPREQ("1")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", MULTIDEV("device-1", CAP0("2")))},
     .expect = R_SHARE("req-0", "device-1", "1") "; " R_SHARE("req-0", "device-1", "1"))

CASE(consumable_capacity_multi_allocatable_device_with_policy_without_capacity_request,
     .features = CC,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-1", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .expect = R_SHARE("req-0", "device-1", "2") "; " R_SHARE("req-0", "device-1", "2"))

CASE(consumable_capacity_multi_allocatable_device_with_zero_request_policy, .features = CC,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1")),
                CLAIM("claim-1", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_VALUES("0", "1", "'0'")))},
     .expect = R_SHARE("req-0", "device-1", "0") "; " R_SHARE("req-0", "device-1", "0"))

CASE(consumable_capacity_multi_allocatable_device_violates_zero_request_policy, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_VALUES("0", "1", "'0'")))},
     .expect = "")

CASE(consumable_capacity_multi_allocatable_device_with_range_policy_with_capacity_request,
     .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1"))),
                CLAIM("claim-1", REQX("req-0", "class-a", "1", CAPREQ("1")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .expect = R_SHARE("req-0", "device-1", "2") "; " R_SHARE("req-0", "device-1", "2"))

CASE(consumable_capacity_multi_allocatable_device_with_range_policy_step, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("3")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .expect = R_SHARE("req-0", "device-1", "4"))

CASE(consumable_capacity_range_policy_request_above_int64_rejected, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("18446744073709551616")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .error = "claim default/claim-0, request req-0: checking capacity for device "
              "driver-a/pool-1/device-1: capacity \"capacity-0\": capacity request cannot be "
              "represented in the device's range arithmetic: request 18446744073709551616 "
              "exceeds MaxInt64")

CASE(consumable_capacity_range_policy_rounded_value_overflow_rejected, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("9223372036854775807")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .error = "rounding request 9223372036854775807 up to the next step passes MaxInt64")

CASE(consumable_capacity_range_policy_overflow_aborts_not_skip, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("18446744073709551616")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")) "," MULTIDEV(
                          "device-2", CAP0("36893488147419103232")))},
     .error = "cannot be represented")

CASE(consumable_capacity_range_policy_allocation_mode_all_overflow_aborts, .features = CC,
     .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", CAPREQ("18446744073709551616")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .error = "claim default/claim-0, request req-0: checking capacity for device device-1: "
              "capacity \"capacity-0\": capacity request cannot be represented")

CASE(consumable_capacity_negative_request_aborts, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("-5")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", MULTIDEV("device-1", CAP0("10")))},
     .error = "capacity \"capacity-0\": capacity value is negative")

CASE(consumable_capacity_multi_allocatable_device_with_valid_values_policy, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("2")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_VALUES("1", "4", "'1','2'")))},
     .expect = R_SHARE("req-0", "device-1", "2"))

CASE(consumable_capacity_multi_allocatable_device_with_valid_values_policy_round_up, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("2")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_VALUES("1", "3", "'1','3'")))},
     .expect = R_SHARE("req-0", "device-1", "3"))

CASE(consumable_capacity_multi_allocatable_device_with_exceeded_consumable_capacity_request,
     .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1"))),
                CLAIM("claim-1", REQX("req-0", "class-a", "1", CAPREQ("2")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("2")))},
     .expect = "")

CASE(consumable_capacity_multi_allocatable_device_with_request_over_max_sharing_policy,
     .features = CC, .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("6")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("10")))},
     .expect = "")

CASE(consumable_capacity_multi_allocatable_device_with_allocated_capacity_use_remaining,
     .features = CC, .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("2")))},
     .capacity = {"driver-a/pool-1/device-1 capacity-0 2000"}, .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .expect = R_SHARE("req-0", "device-1", "2"))

CASE(consumable_capacity_multi_allocatable_device_with_allocated_capacity_next_device,
     .features = CC, .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("2")))},
     .capacity = {"driver-a/pool-1/device-1 capacity-0 2000"}, .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("2")) "," MULTIDEV("device-2",
                                                                        CAP_RANGE("2")))},
     .expect = R_SHARE("req-0", "device-2", "2"))

CASE(
    consumable_capacity_with_multi_allocatable_device_backtrack, .features = CC,
    .claims = {CLAIMX("claim-0",
                      REQX("req-0", "class-a", "1", CAPREQ("2")) "," REQX("req-1", "class-a", "1",
                                                                          CAPREQ("2")),
                      CONSTRAINTS(MATCH("stringAttribute"))),
               CLAIM("claim-1", REQX("req-0", "class-a", "1", CAPREQ("2")))},
    .classes = {CLASS_A},
    .slices = {SLICE(
        "slice-1", "node-1", "pool-1", "driver-a",
        MULTIDEV("device-2", CAP_RANGE("2") "," ATTRS(A_STR("stringAttributeValue1"))) "," MULTIDEV(
            "device-1", CAP_RANGE("4") "," ATTRS(A_STR("stringAttributeValue2"))))},
    .expect = "[req-0:driver-a/pool-1/device-1+share{capacity-0=2} "
              "req-1:driver-a/pool-1/device-1+share{capacity-0=2}] @node-1; " R_SHARE("req-0",
                                                                                      "device-2",
                                                                                      "2"))

CASE(consumable_capacity_multi_allocatable_device_with_no_available_consumable_capacity,
     .features = CC, .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("2")))},
     .capacity = {"driver-a/pool-1/device-1 capacity-0 2000"}, .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("2")))},
     .expect = "")

CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_filter_out_no_capacity,
     .features = CC, .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", CAPREQ("2")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP0("2")) "," DEVX("device-2", MULTI))},
     .expect = R_SHARE("req-0", "device-1", "2"))

CASE(
    consumable_capacity_multi_allocatable_device_allocation_mode_all_filter_out_insufficient_capacity,
    .features = CC, .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", CAPREQ("2")))},
    .classes = {CLASS_MULTI("true")},
    .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                     MULTIDEV("device-1", CAP0("2")) "," MULTIDEV("device-2", CAP0("1")))},
    .expect = R_SHARE("req-0", "device-1", "2"))

CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_allocating_sufficient,
     .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1",
                                      CAPREQ("1")) "," ALLREQX("req-1", "class-a", CAPREQ("1")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP0("2")) "," MULTIDEV("device-2", CAP0("1")))},
     .expect = "[req-0:driver-a/pool-1/device-1+share{capacity-0=1} "
               "req-1:driver-a/pool-1/device-1+share{capacity-0=1} "
               "req-1:driver-a/pool-1/device-2+share{capacity-0=1}] @node-1")

CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_in_use_sufficient,
     .features = CC, .capacity = {"driver-a/pool-1/device-1 capacity-0 1000"},
     .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", CAPREQ("1")))}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP0("2")) "," MULTIDEV("device-2", CAP0("1")))},
     .expect = "[req-0:driver-a/pool-1/device-1+share{capacity-0=1} "
               "req-0:driver-a/pool-1/device-2+share{capacity-0=1}] @node-1")

CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_allocating_insufficient,
     .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1",
                                      CAPREQ("1")) "," ALLREQX("req-1", "class-a", CAPREQ("1")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP0("1")) "," MULTIDEV("device-2", CAP0("1")))},
     .expect = "")

CASE(consumable_capacity_multi_allocatable_device_allocation_mode_all_in_use_insufficient,
     .features = CC, .capacity = {"driver-a/pool-1/device-1 capacity-0 1000"},
     .claims = {CLAIM("claim-0", ALLREQX("req-0", "class-a", CAPREQ("1")))}, .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP0("1")) "," MULTIDEV("device-2", CAP0("1")))},
     .expect = "")

CASE(consumable_capacity_dedicated_device_with_consumable_capacity_request, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1")))},
     .classes = {CLASS_MULTI("false")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", DEVX("device-1", CAP0("1")))},
     .expect = R0_D1)

CASE(consumable_capacity_dedicated_device_with_multiple_consumable_capacity_request, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1"))),
                CLAIM("claim-1", REQX("req-0", "class-a", "1", CAPREQ("1")))},
     .classes = {CLASS_MULTI("false")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", DEVX("device-1", CAP_RANGE("2")))},
     .expect = "")

CASE(consumable_capacity_requests_are_not_modified, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("2")) "," REQX(
                                     "req-1", "class-a", "1", CAPREQ("1000000000000000000000")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1",
                               "'capacity':{'capacity-0':{'value':'1000000000000000000002',"
                               "'requestPolicy':{'default':'1000000000000000000000','validRange':"
                               "{'min':'2'}}}}"))},
     .expect = "[req-0:driver-a/pool-1/device-1+share{capacity-0=2} "
               "req-1:driver-a/pool-1/device-1+share{capacity-0=1000000000000000000000}] @node-1")

CASE(allow_multiple_allocations_exclude_multi_allocatable_device_by_class_selector, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1")))},
     .classes = {CLASS_MULTI("false")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", MULTIDEV("device-1", CAP0("1")))},
     .expect = "")

CASE(allow_multiple_allocations_not_allocate_multi_allocatable_device_which_already_dedicated,
     .features = CC, .allocated = {"driver-a/pool-1/device-1"},
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("2")))},
     .expect = "")

CASE(allow_multiple_allocations_not_allocate_dedicated_device_which_change_from_multi_allocatable,
     .features = CC, .capacity = {"driver-a/pool-1/device-1 capacity-0 1000"},
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("1")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", DEVX("device-1", CAP_RANGE("2")))},
     .expect = "")

/* ---- beyond upstream's table ------------------------------------------------------------- */

/* DeviceTaintRules: upstream's device tracker (resourceslice/tracker applyPatches) appends a
 * rule's taint to every device its selector names before the allocator sees the slices; here the
 * allocator applies them itself. */
#define TAINT_RULE(sel, effect)                                                                    \
    "{" RES "'kind':'DeviceTaintRule','metadata':{'name':'rule'},'spec':{'deviceSelector':{" sel   \
    "},'taint':{'key':'rule-key','value':'v','effect':'" effect "'}}}"
#define TOL_RULE ",'tolerations':[{'operator':'Exists','key':'rule-key'}]"

CASE(taint_rule_blocks_selected_device, .features = "default",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .taint_rules = {TAINT_RULE("'driver':'driver-a','pool':'pool-1','device':'device-1'",
                                "NoSchedule")},
     .expect = "[req-0:driver-a/pool-1/device-2] @node-1")

CASE(taint_rule_whole_pool_noexecute, .features = "default",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .taint_rules = {TAINT_RULE("'driver':'driver-a','pool':'pool-1'", "NoExecute")}, .expect = "")

CASE(taint_rule_other_driver_and_none_effect, .features = "default",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .taint_rules = {TAINT_RULE("'driver':'driver-b'", "NoSchedule"),
                     TAINT_RULE("'driver':'driver-a'", "None")},
     .expect = R0_D1)

CASE(taint_rule_without_selector_selects_nothing, .features = "default",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .taint_rules = {"{" RES "'kind':'DeviceTaintRule','metadata':{'name':'rule'},'spec':{"
                     "'taint':{'key':'rule-key','value':'v','effect':'NoExecute'}}}",
                     TAINT_RULE("", "None")},
     .expect = R0_D1)

CASE(taint_rule_empty_selector_selects_everything, .features = "default",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .taint_rules = {TAINT_RULE("", "NoExecute")}, .expect = "")

CASE(taint_rule_tolerated, .features = "default",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", TOL_RULE))}, .classes = {CLASS_A},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .taint_rules = {TAINT_RULE("'driver':'driver-a'", "NoSchedule")},
     .expect = "[req-0:driver-a/pool-1/device-1+tol(rule-key)] @node-1")

CASE(taint_rule_ignored_without_device_taints, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {TWO_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .taint_rules = {TAINT_RULE("'driver':'driver-a'", "NoSchedule")}, .expect = R0_D1)

/* The compile error as the apiserver's CEL Error renders cel-go's issue (checked against the
 * oracle): the source line, tabs as spaces, and a caret under the column. */
CASE(cel_compile_error_text, .features = "default",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1",
                                      SEL("device.driver == `x` ||\\n\\tnoSuchVar")))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "claim default/claim-0: selector #0: CEL compile error: compilation failed: ERROR: "
              "<input>:2:2: undeclared reference to 'noSuchVar' (in container '')\n |  "
              "noSuchVar\n | .^")

/* A CEL runtime error aborts the whole attempt, worded as upstream (cel.EnhanceRuntimeError). */
CASE(cel_runtime_error_aborts, .features = "default",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1",
                                      SEL("device.attributes[`driver-a`].numa == 1")))},
     .classes = {CLASS_A}, .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a")},
     .error = "claim default/claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime "
              "error: no such key: numa. consider using CEL optional chaining (.? followed by "
              "orValue()) or guarding the check with has() for optional fields")

/* The same claims allocated twice with one cache, and from several threads at once: the results
 * do not depend on what an earlier call compiled or on concurrent calls. */
#include <pthread.h>

static const tcase shared_case = {
    .features = "default",
    .claims = {CLAIM(
        "claim-0", REQX("req-0", "class-a", "1", MEM_GE("2Gi")) "," REQ("req-1", "class-a", "1"))},
    .classes = {CLASS_A},
    .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                     MEMDEV("device-1", "1Gi") "," MEMDEV("device-2", "2Gi"))},
    .expect = "[req-0:driver-a/pool-1/device-2 req-1:driver-a/pool-1/device-1] @node-1"};

static void *run_shared(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++)
        check("shared", &shared_case);
    return NULL;
}

Test(dra_alloc, concurrent_calls)
{
    pthread_t t[4];
    g_cel = ks_dra_cel_cache_new();
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, run_shared, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    ks_dra_cel_cache_free(g_cel);
    g_cel = NULL;
}

/* upstream's "interrupt" test: a search of a few hundred steps, run as is, past its deadline, and
 * cancelled before it starts. */
#define INTERRUPT_CASE                                                                             \
    .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "6"))}, .classes = {CLASS_A},              \
    .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",                                    \
                     DEV("device-1") "," DEV("device-2") "," DEV("device-3") "," DEV(              \
                         "device-4") "," DEV("device-5"))}

CASE(interrupt_off, INTERRUPT_CASE, .expect = "")
CASE(interrupt_deadline, INTERRUPT_CASE, .deadline_ns = 1,
     .error = "filter operation aborted: context deadline exceeded")

static atomic_int cancelled_flag = 1;
CASE(interrupt_cancel, INTERRUPT_CASE, .cancelled = &cancelled_flag,
     .error = "filter operation aborted: context canceled")

/* ---- upstream's table, continued ----------------------------------------------------------- */

#define MODE(v) "'mode':{'string':'" v "'}"

CASE(allow_multiple_allocations_with_shared_device_counter_cross_cycle,
     .features = "PartitionableDevices ConsumableCapacity",
     .claims = {CLAIM("claim-0",
                      REQX("req-0", "class-a", "1",
                           CAPREQ("1") SEL("device.attributes[`driver-a`].mode == `b`")))},
     .shared = {"driver-a/pool-1/device-1"},
     .capacity = {"driver-a/pool-1/device-1 capacity-0 1000"}, .classes = {CLASS_MULTI("true")},
     .slices = {PSLICE_DEV(
                    "slice-1", "pool-1", "2", "driver-a",
                    DEVX("device-1",
                         CAP0("1") "," ATTRS(MODE("a")) "," COUNTERS1(
                             "counter-set-1", "capacity-0",
                             "1") "," MULTI) "," DEVX("device-2",
                                                      CAP0("1") "," ATTRS(MODE("b")) "," COUNTERS1(
                                                          "counter-set-1", "capacity-0",
                                                          "1") "," MULTI)),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "capacity-0", "1"))},
     .expect = "")

CASE(partitionable_consumable_capacity_shared_device_counter_not_recharged,
     .features = "PartitionableDevices ConsumableCapacity", .shared = {"driver-a/pool-1/device-1"},
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1", MULTI "," COUNTERS1("counter-set-1", "c", "1"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a", CSET("counter-set-1", "c", "1"))},
     .expect = "[req-0:driver-a/pool-1/device-1+share] @node-1")

#define CC2(name, c0)                                                                              \
    "{'name':'" name "','capacity':{'capacity-0':{'value':'" c0 "'},'capacity-1':{'value':'4',"    \
    "'requestPolicy':{'default':'2','validRange':{'min':'2','step':'2','max':'4'}}}},"             \
    "'consumesCounters':[{'counterSet':'counter-set-1','counters':{'capacity-0':{'value':'" c0     \
    "'}}},{'counterSet':'counter-set-2','counters':{'capacity-1':{'value':'4'}}}],"                \
    "'allowMultipleAllocations':true}"
#define CAP0_GE(q)                                                                                 \
    SEL("device.capacity[`driver-a`][`capacity-0`].compareTo(quantity(`" q "`)) >= 0")

CASE(consumable_capacity_with_partitionable_device_multiple_capacity_pools,
     .features = "PrioritizedList PartitionableDevices ConsumableCapacity",
     .claims = {CLAIM(
         "claim-0",
         REQX("req-0", "class-a", "1", CAPREQ("1")) "," REQX(
             "req-2", "class-a", "1",
             CAPREQ("2")) "," PRIO("req-1",
                                   SUBX("subReq-0", "class-a", "1",
                                        CAP0_GE("4")
                                            CAPREQ("1")) "," SUBX("subReq-1", "class-a", "1",
                                                                  CAP0_GE("2") CAPREQ("1"))))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           CC2("device-1", "2") "," CC2("device-2", "4") "," CC2("device-3", "2")),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "capacity-0", "4") "," CSET("counter-set-2",
                                                                            "capacity-1", "8"))},
     .expect = "[req-0:driver-a/pool-1/device-1+share{capacity-0=1,capacity-1=2} "
               "req-2:driver-a/pool-1/device-3+share{capacity-0=2,capacity-1=2} "
               "req-1/subReq-1:driver-a/pool-1/device-1+share{capacity-0=1,capacity-1=2}] "
               "@node-1")

#define DISTINCT_FOR(attr, ...)                                                                    \
    "{'distinctAttribute':'driver-a/" attr "','requests':[" __VA_ARGS__ "]}"
#define DISTINCT(attr) "{'distinctAttribute':'driver-a/" attr "'}"
#define VNB(name, v, n, b) MULTIDEV(name, ATTRS(A_VER(v) "," A_NUMA(n) "," A_BOOL(b)))

CASE(with_distinct_constraints, .features = CC,
     .claims = {CLAIMX(
         "claim-0",
         REQ("req-0", "class-a", "1") "," REQ("req-1", "class-a", "1") "," REQ(
             "req-2", "class-a", "1") "," REQ("req-3", "class-a", "1"),
         CONSTRAINTS(DISTINCT_FOR("boolAttribute", "'req-0','req-1'") "," DISTINCT_FOR(
             "driverVersion",
             "'req-0','req-1','req-2'") "," DISTINCT_FOR("numa",
                                                         "'req-0','req-1','req-2','req-3'")))},
     .classes = {CLASS_A},
     .slices = {SLICE(
         "slice-1", "node-1", "pool-1", "driver-a",
         VNB("device-1", "1.0.0", "0", "true") "," VNB("device-2", "1.0.1", "1", "false") "," VNB(
             "device-3", "1.0.2", "2", "true") "," VNB("device-4", "1.0.0", "3", "true"))},
     .expect = "[req-0:driver-a/pool-1/device-1+share req-1:driver-a/pool-1/device-2+share "
               "req-2:driver-a/pool-1/device-3+share req-3:driver-a/pool-1/device-4+share] "
               "@node-1")

#define STR3(v1, v2, v3)                                                                           \
    SLICE("slice-1", "node-1", "pool-1", "driver-a",                                               \
          DEVX("device-1", ATTRS(A_STR(v1))) "," DEVX("device-2", ATTRS(A_STR(v2))) "," DEVX(      \
              "device-3", ATTRS(A_STR(v3))))

CASE(distinct_constraint_single_request_count_3_not_distinct, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "3"),
                       CONSTRAINTS(DISTINCT("stringAttribute")))},
     .classes = {CLASS_A}, .slices = {STR3("value1", "value2", "value1")}, .expect = "")

CASE(distinct_constraint_single_request_count_3_all_distinct, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "3"),
                       CONSTRAINTS(DISTINCT("stringAttribute")))},
     .classes = {CLASS_A}, .slices = {STR3("value1", "value2", "value3")},
     .expect = "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-1/device-2 "
               "req-0:driver-a/pool-1/device-3] @node-1")

CASE(distinct_constraint_two_requests_with_count_not_distinct, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "2") "," REQ("req-1", "class-a", "1"),
                       CONSTRAINTS(DISTINCT_FOR("stringAttribute", "'req-0','req-1'")))},
     .classes = {CLASS_A}, .slices = {STR3("value1", "value2", "value1")}, .expect = "")

CASE(with_distinct_constraints_attribute_not_set, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "1"),
                       CONSTRAINTS(DISTINCT_FOR("boolAttribute", "'req-0'")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", DEVX("device-1", MULTI))},
     .expect = "")

CASE(with_distinct_constraints_unknown_type_attribute, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "1"),
                       CONSTRAINTS(DISTINCT_FOR("boolAttribute", "'req-0'")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", ATTRS("'boolAttribute':{}")))},
     .error = "unsupported attribute value")

#define BOOLSEL SEL("device.attributes[`driver-a`].boolAttribute")
#define PRIO_BOOL(req)                                                                             \
    PRIO(req, SUBX("subReq-0", "class-a", "1", BOOLSEL) "," SUB("subReq-1", "class-a", "1"))

CASE(with_distinct_constraints_with_subrequests, .features = "ConsumableCapacity PrioritizedList",
     .claims = {CLAIMX("claim-0", PRIO_BOOL("req-0") "," PRIO_BOOL("req-1") "," PRIO_BOOL("req-2"),
                       CONSTRAINTS(DISTINCT_FOR("boolAttribute", "'req-0','req-1'")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", ATTRS(A_BOOL("true"))) "," MULTIDEV(
                          "device-2", ATTRS(A_BOOL("false"))))},
     .expect = "[req-0/subReq-0:driver-a/pool-1/device-1+share "
               "req-1/subReq-1:driver-a/pool-1/device-2+share "
               "req-2/subReq-0:driver-a/pool-1/device-1+share] @node-1")

CASE(distinct_constraint_single_request_multiple_devices_attribute_not_set, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "3"), CONSTRAINTS(DISTINCT("numa")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEV("device-1") "," DEV("device-2") "," DEV("device-3"))},
     .expect = "")

#define NUMA4(a, b, c, d)                                                                          \
    SLICE("slice-1", "node-1", "pool-1", "driver-a",                                               \
          DEVX("device-1", ATTRS(A_NUMA(a))) "," DEVX("device-2", ATTRS(A_NUMA(b))) "," DEVX(      \
              "device-3", ATTRS(A_NUMA(c))) "," DEVX("device-4", ATTRS(A_NUMA(d))))

CASE(distinct_constraint_single_request_not_enough_distinct_values, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "3"), CONSTRAINTS(DISTINCT("numa")))},
     .classes = {CLASS_A}, .slices = {NUMA4("1", "2", "2", "2")}, .expect = "")

CASE(distinct_constraint_single_request_multiple_devices_attribute_set, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "3"), CONSTRAINTS(DISTINCT("numa")))},
     .classes = {CLASS_A}, .slices = {NUMA4("1", "2", "1", "3")},
     .expect = "[req-0:driver-a/pool-1/device-1 req-0:driver-a/pool-1/device-2 "
               "req-0:driver-a/pool-1/device-4] @node-1")

CASE(distinct_constraint_one_multi_allocatable_device_with_distinct_constraint, .features = CC,
     .claims = {CLAIMX("claim-0",
                       REQX("req-0", "class-a", "1", CAPREQ("1")) "," REQX("req-1", "class-a", "1",
                                                                           CAPREQ("1")),
                       CONSTRAINTS(DISTINCT("stringAttribute")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1",
                               ATTRS(A_STR("stringAttributeValue")) "," CAP_RANGE("2")))},
     .expect = "")

CASE(distinct_constraint_two_multi_allocatable_devices_with_distinct_constraint, .features = CC,
     .claims = {CLAIMX("claim-0",
                       REQX("req-0", "class-a", "1", CAPREQ("2")) "," REQX("req-1", "class-a", "1",
                                                                           CAPREQ("2")),
                       CONSTRAINTS(DISTINCT("stringAttribute")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           MULTIDEV("device-1",
                                    ATTRS(A_STR("stringAttributeValue1")) "," CAP_RANGE("4"))),
                PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           MULTIDEV("device-2",
                                    ATTRS(A_STR("stringAttributeValue2")) "," CAP_RANGE("4")))},
     .expect = "[req-0:driver-a/pool-1/device-1+share{capacity-0=2} "
               "req-1:driver-a/pool-1/device-2+share{capacity-0=2}] @node-1")

/* withFractionalCapacityRequestPolicyRange: default 200m, min 200m, step 100m, max 1 */
#define CAP_FRAC(v)                                                                                \
    "'capacity':{'capacity-0':{'value':'" v "','requestPolicy':{'default':'200m','validRange':{"   \
    "'min':'200m','step':'100m','max':'1'}}}}"

CASE(consumable_capacity_fractional_range_gate_disabled, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("200m")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_FRAC("1")))},
     .expect = R_SHARE("req-0", "device-1", "1"))

CASE(consumable_capacity_fractional_range_gate_enabled_round_up,
     .features = "ConsumableCapacity FractionalCapacityRange",
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("250m")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_FRAC("1")))},
     .expect = R_SHARE("req-0", "device-1", "300m"))

#define PSLICE_AT(name, node, pool, gen, count, driver, devices)                                   \
    SLICEX(name, "'nodeName':'" node "'", pool, gen, count, driver, ",'devices':[" devices "]")

CASE(allocation_mode_all_with_multi_host_resource_pool,
     .claims = {CLAIM("claim-0", ALLREQ("req-0", "class-a"))}, .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-2", "node-2", "pool-1", "1", "2", "driver-a", DEV("device-2"))},
     .expect = R0_D1)

CASE(multi_host_resource_pool_with_stale_slice_for_current_node,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-2", "node-2", "pool-1", "2", "2", "driver-a", DEV("device-2"))},
     .expect = "")

CASE(multi_host_resource_pool_complete_update_from_node_1_to_node_2,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-2")),
                PSLICE_AT("slice-2", "node-2", "pool-1", "2", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-2", "node-2", "pool-1", "2", "2", "driver-a", DEV("device-2"))},
     .expect = R0_D1)

CASE(multi_host_resource_pool_complete_update_from_node_2_to_node_1,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-2", "pool-1", "1", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-1", "node-2", "pool-1", "1", "2", "driver-a", DEV("device-2")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "2", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "2", "2", "driver-a", DEV("device-2"))},
     .expect = R0_D1)

CASE(multi_host_resource_pool_incomplete_update_from_node_1_to_node_2,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-2")),
                PSLICE_AT("slice-2", "node-2", "pool-1", "2", "2", "driver-a", DEV("device-1"))},
     .expect = R0_D1)

CASE(multi_host_resource_pool_incomplete_update_from_node_2_to_node_1,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-2", "pool-1", "1", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-1", "node-2", "pool-1", "1", "2", "driver-a", DEV("device-2")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "2", "2", "driver-a", DEV("device-1"))},
     .expect = "")

#define EMPTY_CSET(name) "{'name':'" name "'}"

CASE(partitionable_devices_same_counter_set_name_in_different_resource_slices,
     .features = "PartitionableDevices", .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "4", "driver-a", DEV("device-1")),
                PSLICE_CS("slice-2", "pool-1", "4", "driver-a", EMPTY_CSET("counter-set-1")),
                PSLICE_DEV("slice-3", "pool-1", "4", "driver-a", DEV("device-2")),
                PSLICE_CS("slice-4", "pool-1", "4", "driver-a", EMPTY_CSET("counter-set-1"))},
     .error = "invalid resource pools were encountered")

CASE(partitionable_devices_device_counter_consumption_references_unknown_counter_set,
     .features = "PartitionableDevices", .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1", "'consumesCounters':[{'counterSet':'counter-set-2'}]")),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a", EMPTY_CSET("counter-set-1"))},
     .error = "invalid resource pools were encountered")

CASE(partitionable_devices_device_counter_consumption_references_unknown_counter_in_counter_set,
     .features = "PartitionableDevices", .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           DEVX("device-1", COUNTERS1("counter-set-1", "memory", "8Gi"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "other-memory", "8Gi"))},
     .error = "invalid resource pools were encountered")

CASE(partitionable_devices_device_counter_consumption_references_counter_set_in_other_pool,
     .features = "PartitionableDevices", .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "1", "driver-a",
                           DEVX("device-1", COUNTERS1("counter-set-1", "memory", "8Gi"))),
                PSLICE_CS("slice-2", "pool-2", "1", "driver-a",
                          CSET("counter-set-1", "memory", "8Gi"))},
     .error = "invalid resource pools were encountered")

#define CS_AT(name, node, pool, count, driver, sets)                                               \
    SLICEX(name, "'nodeName':'" node "'", pool, "1", count, driver, ",'sharedCounters':[" sets "]")

CASE(partitionable_devices_devices_on_different_nodes_consume_same_counter_set,
     .features = "PartitionableDevices PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO("req-0", SUBX("subReq-0", "class-a", "1",
                                                    MEM_GE("6Gi")) "," SUBX("subReq-1", "class-a",
                                                                            "1", MEM_GE("2Gi"))))},
     .classes = {CLASS_A},
     .slices = {CS_AT("slice-1", "node-1", "pool-1", "3", "driver-a",
                      CSET("counter-set-1", "memory", "8Gi")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "1", "3", "driver-a",
                          FROM_COUNTERS("device-1", "counter-set-1", "memory",
                                        "6Gi") "," FROM_COUNTERS("device-2", "counter-set-1",
                                                                 "memory", "2Gi")),
                PSLICE_AT("slice-3", "node-2", "pool-1", "1", "3", "driver-a",
                          DEVX("device-3", COUNTERS1("counter-set-1", "memory", "6Gi")))},
     .allocated = {"driver-a/pool-1/device-3"},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-2] @node-1")

CASE(partitionable_devices_devices_consume_counter_set_in_different_nodes,
     .features = "PartitionableDevices", .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {CS_AT("slice-1", "node-1", "pool-1", "3", "driver-a",
                      CSET("counter-set-1", "memory", "8Gi")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "1", "3", "driver-a",
                          FROM_COUNTERS("device-1", "counter-set-1", "memory", "6Gi")),
                PSLICE_AT("slice-3", "node-2", "pool-1", "1", "3", "driver-a",
                          FROM_COUNTERS("device-2", "counter-set-1", "memory",
                                        "6Gi") "," FROM_COUNTERS("device-3", "counter-set-1",
                                                                 "memory", "2Gi"))},
     .allocated = {"driver-a/pool-1/device-1"}, .node = NODE("node-2", "region-1"),
     .expect = "[req-0:driver-a/pool-1/device-3] @node-2")

CASE(partitionable_devices_validation_error_on_non_targeting_slice,
     .features = "PartitionableDevices", .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {CS_AT("slice-1", "node-1", "pool-1", "3", "driver-a",
                      CSET("counter-set-1", "memory", "8Gi")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "1", "3", "driver-a",
                          FROM_COUNTERS("device-1", "counter-set-1", "memory", "6Gi")),
                PSLICE_AT("slice-3", "node-2", "pool-1", "1", "3", "driver-a",
                          DEVX("device-3", COUNTERS1("counter-set-2", "memory", "6Gi")))},
     .error = "invalid resource pools were encountered")

CASE(different_resourceslices_in_pool_can_target_different_nodes,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-2", "pool-1", "1", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-2"))},
     .expect = "[req-0:driver-a/pool-1/device-2] @node-1")

#define INVALID_POOL_SLICES                                                                        \
    PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-1")),               \
        PSLICE_AT("slice-2", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-1")),           \
        PSLICE_AT("slice-3", "node-1", "pool-2", "1", "1", "driver-a", DEV("device-2"))

CASE(invalid_pool_is_ok_if_devices_can_be_allocated_from_other,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {INVALID_POOL_SLICES}, .expect = "[req-0:driver-a/pool-2/device-2] @node-1")

CASE(invalid_pool_is_error_if_no_other_device_can_be_allocated,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {INVALID_POOL_SLICES}, .allocated = {"driver-a/pool-2/device-2"},
     .error = "invalid resource pools were encountered")

CASE(no_allocation_from_incomplete_pools,
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-1"))},
     .expect = "")

/* The search's step counts (Stats.NumAllocateOneInvocations), pinning down upstream's order of
 * combinations. */
#define DEV4 DEV("device-1") "," DEV("device-2") "," DEV("device-3") "," DEV("device-4")
#define REQ5 CLAIM("claim-0", REQ("req-0", "class-a", "5"))

CASE(check_combinations_within_single_request_single_pool_single_slice, .claims = {REQ5},
     .classes = {CLASS_A}, .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", DEV4)},
     .expect = "", .steps = 16)

CASE(check_combinations_within_single_request_single_pool_multiple_slices, .claims = {REQ5},
     .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a",
                          DEV("device-1") "," DEV("device-2")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "1", "2", "driver-a",
                          DEV("device-3") "," DEV("device-4"))},
     .expect = "", .steps = 16)

CASE(check_combinations_within_single_request_multiple_pools_multiple_slices, .claims = {REQ5},
     .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-1")),
                PSLICE_AT("slice-2", "node-1", "pool-1", "1", "2", "driver-a", DEV("device-2")),
                SLICE("slice-3", "node-1", "pool-2", "driver-a",
                      DEV("device-3") "," DEV("device-4"))},
     .expect = "", .steps = 16)

CASE(check_combinations_within_single_request_many_pools, .claims = {REQ5}, .classes = {CLASS_A},
     .slices = {ONE_DEV("slice-1", "node-1", "pool-1", "driver-a"),
                SLICE("slice-2", "node-1", "pool-2", "driver-a", DEV("device-2")),
                SLICE("slice-3", "node-1", "pool-3", "driver-a", DEV("device-3")),
                SLICE("slice-4", "node-1", "pool-4", "driver-a", DEV("device-4"))},
     .expect = "", .steps = 16)

#define TYPE(v) ATTRS("'type':{'string':'" v "'}")
#define TYPE_IS(v) SEL("device.attributes[`driver-a`].type == `" v "`")

CASE(check_combinations_with_backtracking,
     .claims = {CLAIM("claim-0", REQ("req-1", "class-a", "2") "," REQX("req-2", "class-a", "1",
                                                                       TYPE_IS("X")))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", TYPE("X")) "," DEVX("device-2", TYPE("Y")) "," DEVX(
                          "device-3", TYPE("Y")))},
     .expect = "[req-1:driver-a/pool-1/device-2 req-1:driver-a/pool-1/device-3 "
               "req-2:driver-a/pool-1/device-1] @node-1",
     .steps = 12)

CASE(check_combinations_with_backtracking_across_slices_and_pools,
     .features = "DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-1", "class-a", "2") "," REQX("req-2", "class-a", "1",
                                                                       TYPE_IS("X")))},
     .classes = {CLASS_A},
     .slices = {PSLICE_AT("slice-1", "node-1", "pool-1", "1", "2", "driver-a",
                          DEVX("device-1", TYPE("X"))),
                PSLICE_AT("slice-2", "node-1", "pool-1", "1", "2", "driver-a",
                          DEVX("device-2", TYPE("Y"))),
                SLICE("slice-3", "node-1", "pool-2", "driver-a",
                      DEVX("device-3", TYPE("Y") ",'bindingConditions':['IsPrepare'],"
                                                 "'bindingFailureConditions':[]"))},
     .expect = "[req-1:driver-a/pool-1/device-2 req-1:driver-a/pool-2/device-3+bc(IsPrepare) "
               "req-2:driver-a/pool-1/device-1] @node-1",
     .steps = 12)

CASE(check_combinations_with_prioritized_list, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0",
                      PRIO("req-1", SUBX("subReq-0", "class-a", "3", TYPE_IS("Y")) "," SUB(
                                        "subReq-1", "class-a",
                                        "2")) "," PRIO("req-2",
                                                       SUB("subReq-0", "class-a",
                                                           "2") "," SUBX("subReq-1", "class-a", "1",
                                                                         TYPE_IS("X"))))},
     .classes = {CLASS_A},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      DEVX("device-1", TYPE("X")) "," DEVX("device-2", TYPE("Y")) "," DEVX(
                          "device-3", TYPE("Y")))},
     .expect = "[req-1/subReq-1:driver-a/pool-1/device-2 req-1/subReq-1:driver-a/pool-1/device-3 "
               "req-2/subReq-1:driver-a/pool-1/device-1] @node-1",
     .steps = 26)

CASE(prioritized_list_max_allocation_allocation_mode_all, .features = "PrioritizedList",
     .claims = {CLAIM("claim-0", PRIO("req-0", SUB_ALL("subReq-0", "class-a") "," SUB(
                                                   "subReq-1", "class-a",
                                                   "2")) "," REQ("req-1", "class-b", "2"))},
     .classes = {CLASS_A, CLASS_B},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a", "#DEVS31#"),
                SLICE("slice-2", "node-1", "pool-2", "driver-b", "#DEVS2#")},
     .expect = "[req-0/subReq-1:driver-a/pool-1/device-0 req-0/subReq-1:driver-a/pool-1/device-1 "
               "req-1:driver-b/pool-2/device-0 req-1:driver-b/pool-2/device-1] @node-1",
     .steps = 42)

CASE(consumable_capacity_multi_allocatable_device_with_subrequest,
     .features = "ConsumableCapacity PrioritizedList",
     .claims = {CLAIM("claim-0",
                      PRIO("req-0", SUBX("subReq-0", "class-a", "1", CAPREQ("4")) "," SUBX(
                                        "subReq-1", "class-a", "1",
                                        CAPREQ("2")) "," SUB("subReq-1", "class-a", "1")))},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("2")))},
     .expect = R_SHARE("req-0/subReq-1", "device-1", "2"))

/* With DRADeviceCompatibilityGroups off (not supported by this implementation), slices whose
 * devices declare compatibility groups are ignored, which leaves their pool incomplete. */
#define GROUPED(name, set, v)                                                                      \
    DEVX(name, "'consumesCounters':[{'counterSet':'" set "','counters':{'capacity-0':{'value':'" v \
               "'}},'compatibilityGroups':['mig']}]")

CASE(compatibility_groups_disabled_skips_grouped_pool, .features = "PartitionableDevices",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           GROUPED("device-1", "counter-set-1", "2")),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "capacity-0", "4")),
                PSLICE_DEV("slice-3", "pool-2", "2", "driver-a",
                           DEVX("device-2", COUNTERS1("counter-set-2", "capacity-0", "2"))),
                PSLICE_CS("slice-4", "pool-2", "2", "driver-a",
                          CSET("counter-set-2", "capacity-0", "4"))},
     .expect = "[req-0:driver-a/pool-2/device-2] @node-1")

CASE(compatibility_groups_disabled_skips_ungrouped_device_in_grouped_pool,
     .features = "PartitionableDevices", .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1"))},
     .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "3", "driver-a",
                           GROUPED("device-1", "counter-set-1", "1")),
                PSLICE_DEV("slice-2", "pool-1", "3", "driver-a",
                           DEVX("device-2", COUNTERS1("counter-set-1", "capacity-0", "1"))),
                PSLICE_CS("slice-3", "pool-1", "3", "driver-a",
                          CSET("counter-set-1", "capacity-0", "4"))},
     .expect = "")

#define MULTI_MEMC(name, v)                                                                        \
    DEVX(name, "'capacity':{'memory':{'value':'" v                                                 \
               "'}}," COUNTERS1("counter-set-1", "memory", v) "," MULTI)

CASE(allow_multiple_allocations_with_partitionable_device,
     .features = "PrioritizedList PartitionableDevices ConsumableCapacity",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "1") "," PRIO(
                                     "req-1", SUBX("subReq-0", "class-a", "1",
                                                   MEM_GE("6Gi")) "," SUBX("subReq-1", "class-a",
                                                                           "1", MEM_GE("4Gi"))))},
     .classes = {CLASS_MULTI("true")},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           MULTI_MEMC("device-1", "4Gi") "," MULTI_MEMC(
                               "device-2", "6Gi") "," MULTI_MEMC("device-3", "4Gi")),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "memory", "8Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1+share{memory=4294967296} "
               "req-1/subReq-1:driver-a/pool-1/device-3+share{memory=4294967296}] @node-1")

/* Several allocated-state entries for one device add up (ConsumedCapacityCollection.Insert):
 * 1 + 1 already consumed leaves room for 2 of 4, 1 + 1 + 1 does not. (Found by the oracle.) */
CASE(aggregated_capacity_entries_add_up, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("2")))},
     .capacity = {"driver-a/pool-1/device-1 capacity-0 1000",
                  "driver-a/pool-1/device-1 capacity-0 1000"},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .expect = R_SHARE("req-0", "device-1", "2"))

CASE(aggregated_capacity_entries_add_up_past_the_limit, .features = CC,
     .claims = {CLAIM("claim-0", REQX("req-0", "class-a", "1", CAPREQ("2")))},
     .capacity = {"driver-a/pool-1/device-1 capacity-0 1000",
                  "driver-a/pool-1/device-1 capacity-0 1000",
                  "driver-a/pool-1/device-1 capacity-0 1000"},
     .classes = {CLASS_MULTI("true")},
     .slices = {SLICE("slice-1", "node-1", "pool-1", "driver-a",
                      MULTIDEV("device-1", CAP_RANGE("4")))},
     .expect = "")

CASE(partitionable_devices_with_binding_conditions_multiple,
     .features = "PartitionableDevices DeviceBindingAndStatus",
     .claims = {CLAIM("claim-0", REQ("req-0", "class-a", "2"))}, .classes = {CLASS_A},
     .slices = {PSLICE_DEV("slice-1", "pool-1", "2", "driver-a",
                           MEM_BC("device-1", "counter-set-1", "4Gi",
                                  "," BC("IsPrepare",
                                         "BindingFailed")) "," MEM_BC("device-2", "counter-set-1",
                                                                      "4Gi",
                                                                      "," BC("IsPrepare2",
                                                                             "BindingFailed2"))),
                PSLICE_CS("slice-2", "pool-1", "2", "driver-a",
                          CSET("counter-set-1", "memory", "8Gi"))},
     .expect = "[req-0:driver-a/pool-1/device-1+bc(IsPrepare)+bfc(BindingFailed) "
               "req-0:driver-a/pool-1/device-2+bc(IsPrepare2)+bfc(BindingFailed2)] @node-1")

/* List-typed attributes while DRAListTypeAttributes is off: selectors still see them, but the
 * constraints compare scalars only. */
#define STR_LISTS                                                                                  \
    SLICE(                                                                                         \
        "slice-1", "node-1", "pool-1", "driver-a",                                                 \
        DEVX(                                                                                      \
            "device-1",                                                                            \
            ATTRS(                                                                                 \
                "'stringAttribute':{'strings':['value1','value2','value3']}")) "," DEVX("device-"  \
                                                                                        "2",       \
                                                                                        ATTRS(     \
                                                                                            "'str" \
                                                                                            "ingA" \
                                                                                            "ttri" \
                                                                                            "bute" \
                                                                                            "':{'" \
                                                                                            "stri" \
                                                                                            "ngs'" \
                                                                                            ":['"  \
                                                                                            "valu" \
                                                                                            "e2'," \
                                                                                            "'val" \
                                                                                            "ue3'" \
                                                                                            ",'"   \
                                                                                            "valu" \
                                                                                            "e4']" \
                                                                                            "}")))

CASE(list_attributes_disabled_match_constraint_with_lists,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "2"),
                       CONSTRAINTS(MATCH("stringAttribute")))},
     .classes = {CLASS_A}, .slices = {STR_LISTS}, .expect = "")

CASE(list_attributes_disabled_distinct_constraint_with_lists, .features = CC,
     .claims = {CLAIMX("claim-0", REQ("req-0", "class-a", "2"),
                       CONSTRAINTS(DISTINCT("stringAttribute")))},
     .classes = {CLASS_A}, .slices = {STR_LISTS}, .expect = "")
