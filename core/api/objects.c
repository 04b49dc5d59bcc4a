/*
 * Pod and Node conversion from JSON (cJSON) into the compact structs of objects.h.
 *
 * This is the one place where API objects are read field by field; everything downstream
 * (cache, framework, plugins through the SDK) reads the structs. Pod requests follow upstream
 * component-helpers PodRequests (containers, init containers with restartable sidecars, pod-level
 * resources, overhead) and the scheduler's non-zero variant (100m / 200Mi per container lacking a
 * cpu / memory request). API-server defaulting that a manifest may lack is applied here, as the
 * API server would on create: a container's requests default to its limits; a node's allocatable
 * defaults to its capacity.
 */
#define _GNU_SOURCE /* strptime, timegm */
#include "util/numconv.h"
#include "api/objects.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/intern.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "api/shared.h"
#include "api/volume_objects.h"

ks_sym ks__sym_cpu, ks__sym_memory, ks__sym_ephemeral_storage, ks__sym_pods;

#define DEFAULT_MILLI_CPU_REQUEST 100
#define DEFAULT_MEMORY_REQUEST (200LL * 1024 * 1024)

void ks__objects_init(void)
{
    ks__intern("");
    ks__sym_cpu = ks__intern("cpu");
    ks__sym_memory = ks__intern("memory");
    ks__sym_ephemeral_storage = ks__intern("ephemeral-storage");
    ks__sym_pods = ks__intern("pods");
}

/* ---- small helpers ------------------------------------------------------------------------- */

/* What the parse functions share: where an error message goes, the references on the symbols
 * they intern, which the object being parsed holds (see intern.h), and whether the API server's
 * value rules apply (the _checked entry points, objects.h). Decode errors (a wrong type, an
 * unknown operator, a number that is no int32) are refused either way; the value rules only when
 * checked, each guarded by `if (e->checked ...)` where it is tested. */
typedef struct {
    char *buf;
    size_t len;
    ks__symrefs *syms;
    int checked;
} parse_ctx;

static KS_PRINTF(2, 3) int fail(parse_ctx *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->buf, e->len, fmt, ap);
    va_end(ap);
    return KS_EPARSE;
}

static const cJSON *get(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

static const char *get_str(const cJSON *obj, const char *key)
{
    const cJSON *v = get(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* An int32 field (a weight, a port): 0 when absent or null. A value that is not an integer within
 * int32 is refused, as the API server's decoder refuses it (converting it here would be undefined
 * past int32, or would truncate it to another, maybe valid, value). */
static int get_int32(parse_ctx *e, const cJSON *obj, const char *key, const char *path,
                     int32_t *out)
{
    const cJSON *v = get(obj, key);
    *out = 0;
    if (!v || cJSON_IsNull(v))
        return 0;
    /* Range first: converting an out-of-range double is undefined. */
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= INT32_MIN && v->valuedouble <= INT32_MAX) ||
        v->valuedouble != (double)(int32_t)v->valuedouble) {
        if (cJSON_IsString(v))
            return fail(e, "%s.%s: expected a 32-bit integer, got \"%s\"", path, key,
                        v->valuestring);
        if (cJSON_IsNumber(v))
            return fail(e, "%s.%s: expected a 32-bit integer, got %.17g", path, key,
                        v->valuedouble);
        return fail(e, "%s.%s: expected a 32-bit integer", path, key);
    }
    *out = (int32_t)v->valuedouble;
    return 0;
}

/* s interned, held by the object being parsed. */
static ks_sym intern(parse_ctx *e, const char *s) { return ks__symrefs_intern(e->syms, s); }

static ks_sym get_sym(parse_ctx *e, const cJSON *obj, const char *key, const char *dflt)
{
    const char *s = get_str(obj, key);
    return intern(e, s ? s : dflt);
}

static char *xstrdup(const char *s) { return strdup(s ? s : ""); }

/* Text of a JSON number that YAML made out of a plain scalar: the shortest form that reads back
 * as the same double, so "0.1" stays "0.1" (not "0.10000000000000001") and 17-digit integers
 * keep their digits. */
static const char *number_text(double d, char *buf, size_t len)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    return buf;
}

static int cmp_label(const void *a, const void *b)
{
    const ks_label *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

ks_sym ks__labels_get(const ks_label *labels, size_t n, ks_sym key)
{
    return ks_labels_get(labels, n, key); /* the SDK's binary search, for plugins and core alike */
}

/* A map of string -> string (labels, annotations, nodeSelector) as a sorted ks_label array. */
static int parse_string_map(const cJSON *obj, const char *path, ks_label **out, size_t *n,
                            parse_ctx *e)
{
    const cJSON *it;
    size_t i = 0;
    *out = NULL;
    *n = 0;
    if (!obj || cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj))
        return fail(e, "%s: expected a map of strings", path);
    *n = (size_t)cJSON_GetArraySize(obj);
    if (*n == 0)
        return 0;
    *out = calloc(*n, sizeof(ks_label));
    if (!*out)
        return KS_ENOMEM;
    cJSON_ArrayForEach(it, obj)
    {
        char num[64];
        const char *v = NULL;
        if (cJSON_IsString(it))
            v = it->valuestring;
        else if (cJSON_IsNumber(it)) /* YAML may turn "1" into a number; keep the text */
            v = number_text(it->valuedouble, num, sizeof(num));
        else if (cJSON_IsBool(it))
            v = cJSON_IsTrue(it) ? "true" : "false";
        else
            return fail(e, "%s.%s: expected a string value", path, it->string);
        (*out)[i].key = intern(e, it->string);
        (*out)[i].value = intern(e, v);
        i++;
    }
    qsort(*out, *n, sizeof(ks_label), cmp_label);
    return 0;
}

/* Text of a quantity that YAML may have turned into a number. */
static const char *quantity_text(const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString(v)) {
        /* upstream Quantity.UnmarshalJSON trims surrounding white space */
        const char *p = v->valuestring;
        size_t n;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        n = strlen(p);
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\n' || p[n - 1] == '\r'))
            n--;
        if (p == v->valuestring && n == strlen(p))
            return p;
        if (n >= len)
            return p; /* too long to copy: parse as is (and fail, naming the field) */
        memcpy(buf, p, n);
        buf[n] = '\0';
        return buf;
    }
    if (cJSON_IsNumber(v))
        return number_text(v->valuedouble, buf, len);
    return NULL;
}

/* ---- resource lists ------------------------------------------------------------------------ */

/* A growable resource list used while computing requests. */
typedef struct {
    int64_t cpu, memory, eph, pods;
    int has_cpu, has_memory;
    size_t n, cap;
    ks_scalar *sc;
} rlist;

static void rl_free(rlist *r)
{
    free(r->sc);
    memset(r, 0, sizeof(*r));
}

static int64_t *rl_scalar_slot(rlist *r, ks_sym name)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->sc[i].name == name)
            return &r->sc[i].value;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4;
        ks_scalar *s = realloc(r->sc, cap * sizeof(*s));
        if (!s)
            return NULL;
        r->sc = s;
        r->cap = cap;
    }
    r->sc[r->n].name = name;
    r->sc[r->n].value = 0;
    return &r->sc[r->n++].value;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return a > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* Whether a quantity that parsed is below zero: a minus sign and a nonzero digit before the
 * suffix. Not read from the parsed values: "-1n" is negative, yet its milli value rounds up to 0.
 */
static int quantity_negative(const char *text)
{
    if (*text != '-')
        return 0;
    for (const char *p = text + 1; (*p >= '0' && *p <= '9') || *p == '.'; p++)
        if (*p >= '1' && *p <= '9')
            return 1;
    return 0;
}

/* Parses a ResourceList (requests, limits, allocatable, overhead) into r. */
static int parse_resource_list(const cJSON *obj, const char *path, rlist *r, parse_ctx *e)
{
    const cJSON *it;
    memset(r, 0, sizeof(*r));
    if (!obj || cJSON_IsNull(obj))
        return 0;
    if (!cJSON_IsObject(obj))
        return fail(e, "%s: expected a map of resource quantities", path);
    cJSON_ArrayForEach(it, obj)
    {
        char buf[64];
        int64_t value, milli;
        const char *text = quantity_text(it, buf, sizeof(buf));
        if (!text || ks__quantity_parse(text, &value, &milli) != 0) {
            rl_free(r);
            return fail(e,
                        "%s.%s: invalid quantity \"%s\" (expected e.g. \"500m\", \"2\", \"1Gi\")",
                        path, it->string, text ? text : "(not a string)");
        }
        /* Requests, limits, overhead and node capacity may not be negative (upstream
         * ValidateResourceQuantityValue): a negative request would free room on a node. The
         * value is quoted as written, where upstream writes the canonical form ("-0.5" there is
         * "-500m"). */
        if (e->checked && quantity_negative(text)) {
            rl_free(r);
            return fail(e, "%s.%s: Invalid value: \"%s\": must be greater than or equal to 0", path,
                        it->string, text);
        }
        /* Resource names are pinned: a NodeInfo keeps a zero sum under the name of an extended
         * resource after the pods that requested it are gone (as upstream's Resource does), and
         * a cluster has few of them. */
        ks_sym name = ks__intern(it->string);
        if (name == ks__sym_cpu) {
            r->cpu = milli;
            r->has_cpu = 1;
        } else if (name == ks__sym_memory) {
            r->memory = value;
            r->has_memory = 1;
        } else if (name == ks__sym_ephemeral_storage) {
            r->eph = value;
        } else if (name == ks__sym_pods) {
            r->pods = value;
        } else {
            int64_t *slot = rl_scalar_slot(r, name);
            if (!slot) {
                rl_free(r);
                return KS_ENOMEM;
            }
            *slot = value;
        }
    }
    return 0;
}

/* rl_add / rl_max also carry whether cpu and memory are listed (a key present in a Go
 * ResourceList), which decides where the non-zero defaults apply. */
static int rl_add(rlist *dst, const rlist *src)
{
    dst->has_cpu |= src->has_cpu;
    dst->has_memory |= src->has_memory;
    dst->cpu = sat_add(dst->cpu, src->cpu);
    dst->memory = sat_add(dst->memory, src->memory);
    dst->eph = sat_add(dst->eph, src->eph);
    for (size_t i = 0; i < src->n; i++) {
        int64_t *slot = rl_scalar_slot(dst, src->sc[i].name);
        if (!slot)
            return KS_ENOMEM;
        *slot = sat_add(*slot, src->sc[i].value);
    }
    return 0;
}

static int rl_max(rlist *dst, const rlist *src)
{
    /* maxResourceList: a resource dst lacks is taken as is (even a negative one). */
    if (src->has_cpu && (!dst->has_cpu || src->cpu > dst->cpu))
        dst->cpu = src->cpu;
    if (src->has_memory && (!dst->has_memory || src->memory > dst->memory))
        dst->memory = src->memory;
    dst->has_cpu |= src->has_cpu;
    dst->has_memory |= src->has_memory;
    if (src->eph > dst->eph)
        dst->eph = src->eph;
    for (size_t i = 0; i < src->n; i++) {
        int64_t *slot = rl_scalar_slot(dst, src->sc[i].name);
        if (!slot)
            return KS_ENOMEM;
        if (src->sc[i].value > *slot)
            *slot = src->sc[i].value;
    }
    return 0;
}

static int cmp_scalar(const void *a, const void *b)
{
    const ks_scalar *x = a, *y = b;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Moves r into an owned ks__resources (drops zero scalars? no: upstream keeps explicit zeros). */
static void rl_to_resources(rlist *r, ks__resources *out)
{
    memset(out, 0, sizeof(*out));
    out->pub.milli_cpu = r->cpu;
    out->pub.memory = r->memory;
    out->pub.ephemeral_storage = r->eph;
    out->pub.allowed_pods = r->pods;
    if (r->n) {
        qsort(r->sc, r->n, sizeof(ks_scalar), cmp_scalar);
        out->scalar = r->sc;
        out->pub.scalar = r->sc;
        out->pub.nscalar = (uint32_t)r->n;
    } else {
        free(r->sc);
    }
    r->sc = NULL;
    r->n = r->cap = 0;
}

void ks__resources_free(ks__resources *r)
{
    if (!r)
        return;
    free(r->scalar);
    free(r->sum_scalar);
    memset(r, 0, sizeof(*r));
}

static int64_t sat_i128(ks__i128 v)
{
    return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* dst's exact sums := its values (a list built from a ResourceList, or copied from one). */
static int res_sync_sums(ks__resources *dst)
{
    dst->sum_cpu = dst->pub.milli_cpu;
    dst->sum_memory = dst->pub.memory;
    dst->sum_eph = dst->pub.ephemeral_storage;
    free(dst->sum_scalar);
    dst->sum_scalar = NULL;
    if (!dst->pub.nscalar)
        return 0;
    dst->sum_scalar = malloc(dst->pub.nscalar * sizeof(ks__i128));
    if (!dst->sum_scalar)
        return KS_ENOMEM;
    for (uint32_t i = 0; i < dst->pub.nscalar; i++)
        dst->sum_scalar[i] = dst->scalar[i].value;
    return 0;
}

static int res_scalar_apply(ks__resources *dst, const ks_resources *src, int sign)
{
    for (uint32_t i = 0; i < src->nscalar; i++) {
        ks_sym name = src->scalar[i].name;
        uint32_t j, n = dst->pub.nscalar;
        for (j = 0; j < n && dst->scalar[j].name < name; j++)
            ;
        if (j == n || dst->scalar[j].name != name) {
            /* Insert at j, keeping both arrays sorted by name id and in step. */
            ks_scalar *s = realloc(dst->scalar, (n + 1) * sizeof(*s));
            if (!s)
                return KS_ENOMEM;
            dst->scalar = s;
            dst->pub.scalar = s;
            ks__i128 *sum = realloc(dst->sum_scalar, (n + 1) * sizeof(*sum));
            if (!sum)
                return KS_ENOMEM;
            dst->sum_scalar = sum;
            memmove(&s[j + 1], &s[j], (n - j) * sizeof(*s));
            memmove(&sum[j + 1], &sum[j], (n - j) * sizeof(*sum));
            s[j].name = name;
            s[j].value = 0;
            sum[j] = 0;
            dst->pub.nscalar = n + 1;
        }
        dst->sum_scalar[j] += (ks__i128)sign * src->scalar[i].value;
        dst->scalar[j].value = sat_i128(dst->sum_scalar[j]);
    }
    dst->pub.scalar = dst->scalar;
    return 0;
}

/* Exact in 128 bits (a node would need 2^63 pods of INT64_MAX to overflow them); what plugins
 * read saturates, so a sum past INT64_MAX never wraps negative and a full node stays full. */
static void res_apply(ks__resources *dst, const ks_resources *src, int sign)
{
    dst->sum_cpu += (ks__i128)sign * src->milli_cpu;
    dst->sum_memory += (ks__i128)sign * src->memory;
    dst->sum_eph += (ks__i128)sign * src->ephemeral_storage;
    dst->pub.milli_cpu = sat_i128(dst->sum_cpu);
    dst->pub.memory = sat_i128(dst->sum_memory);
    dst->pub.ephemeral_storage = sat_i128(dst->sum_eph);
    if (src->nscalar)
        (void)res_scalar_apply(dst, src, sign);
}

void ks__resources_add(ks__resources *dst, const ks_resources *src) { res_apply(dst, src, 1); }

void ks__resources_sub(ks__resources *dst, const ks_resources *src) { res_apply(dst, src, -1); }

int ks__resources_copy(ks__resources *dst, const ks_resources *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->pub = *src;
    dst->pub.scalar = NULL;
    if (src->nscalar) {
        dst->scalar = malloc(src->nscalar * sizeof(ks_scalar));
        if (!dst->scalar)
            return KS_ENOMEM;
        memcpy(dst->scalar, src->scalar, src->nscalar * sizeof(ks_scalar));
        dst->pub.scalar = dst->scalar;
    }
    return res_sync_sums(dst);
}

int ks__resources_dup(ks__resources *dst, const ks__resources *src)
{
    int rc = ks__resources_copy(dst, &src->pub);
    if (rc)
        return rc;
    dst->sum_cpu = src->sum_cpu;
    dst->sum_memory = src->sum_memory;
    dst->sum_eph = src->sum_eph;
    if (src->pub.nscalar)
        memcpy(dst->sum_scalar, src->sum_scalar, src->pub.nscalar * sizeof(ks__i128));
    return 0;
}

/* ---- pods ---------------------------------------------------------------------------------- */

/* API-server defaulting for cpu and memory: a resource with a limit and no request requests its
 * limit (containers and pod-level resources alike). */
static void default_cpu_memory_from_limits(rlist *req, const rlist *lim)
{
    if (!req->has_cpu && lim->has_cpu) {
        req->cpu = lim->cpu;
        req->has_cpu = 1;
    }
    if (!req->has_memory && lim->has_memory) {
        req->memory = lim->memory;
        req->has_memory = 1;
    }
}

/* One container's requests (defaulted from limits as the API server does) and, when nonzero,
 * with the scheduler's defaults for a missing cpu / memory entry. */
/* Which of upstream's NonMissingContainerRequests a computation applies (applyNonMissing): a
 * container whose list lacks cpu (memory) gets 100m (200Mi). */
enum { DEF_CPU = 1, DEF_MEMORY = 2, DEF_BOTH = DEF_CPU | DEF_MEMORY, DEF_FIT_SCORER = 4 };

static void apply_non_missing(rlist *r, unsigned defaults)
{
    if ((defaults & DEF_CPU) && !r->has_cpu) {
        r->cpu = DEFAULT_MILLI_CPU_REQUEST;
        r->has_cpu = 1;
    }
    if ((defaults & DEF_MEMORY) && !r->has_memory) {
        r->memory = DEFAULT_MEMORY_REQUEST;
        r->has_memory = 1;
    }
}

/* A container's spec requests, with the API server's defaulting from limits. */
static int container_spec_requests(const cJSON *c, const char *path, rlist *out, parse_ctx *e)
{
    char p[256];
    rlist lim;
    const cJSON *res = get(c, "resources");
    int rc;
    snprintf(p, sizeof(p), "%s.resources.requests", path);
    if ((rc = parse_resource_list(get(res, "requests"), p, out, e)) != 0)
        return rc;
    snprintf(p, sizeof(p), "%s.resources.limits", path);
    if ((rc = parse_resource_list(get(res, "limits"), p, &lim, e)) != 0) {
        rl_free(out);
        return rc;
    }
    /* API-server defaulting: a resource with a limit and no request requests its limit. */
    default_cpu_memory_from_limits(out, &lim);
    if (!get(get(res, "requests"), "ephemeral-storage") &&
        get(get(res, "limits"), "ephemeral-storage"))
        out->eph = lim.eph;
    for (size_t i = 0; i < lim.n; i++) {
        int found = 0;
        for (size_t j = 0; j < out->n; j++)
            found |= out->sc[j].name == lim.sc[i].name;
        if (!found) {
            int64_t *slot = rl_scalar_slot(out, lim.sc[i].name);
            if (!slot) {
                rl_free(&lim);
                rl_free(out);
                return KS_ENOMEM;
            }
            *slot = lim.sc[i].value;
        }
    }
    rl_free(&lim);
    return 0;
}

/* Where a container's requests come from (component-helpers resource, v0.37): the spec, the
 * allocated resources the kubelet accepted (containerAllocatedRequests) or the resources it
 * actuated (containerActuatedRequests); the two status sources fall back as upstream does. */
typedef enum { SRC_SPEC, SRC_ALLOCATED, SRC_ACTUATED } req_src;

/* findContainerStatus: the status named name among containerStatuses, then
 * initContainerStatuses (whichever list the container is in). */
static const cJSON *container_status(const cJSON *status, const char *name)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses"};
    const cJSON *cs;
    if (!name)
        return NULL;
    for (int l = 0; l < 2; l++)
        cJSON_ArrayForEach(cs, get(status, lists[l]))
        {
            const char *n = get_str(cs, "name");
            if (n && strcmp(n, name) == 0)
                return cs;
        }
    return NULL;
}

/* A list field that is set (a Go map that is not nil: present and not null). */
static const cJSON *set_list(const cJSON *obj, const char *key)
{
    const cJSON *v = get(obj, key);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* One container's requests from src, then the defaults. infeasible: the pod's resize is
 * Infeasible, so a status source without status gives nothing instead of the spec. */
static int container_requests(const cJSON *c, const cJSON *status, req_src src, int infeasible,
                              unsigned defaults, const char *path, rlist *out, parse_ctx *e)
{
    const cJSON *cs = src == SRC_SPEC ? NULL : container_status(status, get_str(c, "name"));
    const cJSON *alloc = set_list(cs, "allocatedResources");
    const cJSON *actual = set_list(get(cs, "resources"), "requests");
    int rc = 0;
    if (src == SRC_ACTUATED && actual)
        rc = parse_resource_list(actual, "status.containerStatuses[].resources.requests", out, e);
    else if (src != SRC_SPEC && alloc)
        rc = parse_resource_list(alloc, "status.containerStatuses[].allocatedResources", out, e);
    else if (src != SRC_SPEC && infeasible)
        memset(out, 0, sizeof(*out));
    else
        rc = container_spec_requests(c, path, out, e);
    if (rc == 0)
        apply_non_missing(out, defaults);
    return rc;
}

/* aggregateContainerResourcesByFn: regular containers summed; restartable init containers
 * (sidecars) added to the pod and to every later init container; the pod needs at least the
 * largest init container's use. */
static int aggregate_containers(const cJSON *spec, const cJSON *status, req_src src, int infeasible,
                                unsigned defaults, rlist *reqs, parse_ctx *e)
{
    rlist init_max = {0}, sidecars = {0}, c = {0};
    const cJSON *it;
    char path[128];
    int i = 0, rc = 0;
    memset(reqs, 0, sizeof(*reqs));
    cJSON_ArrayForEach(it, get(spec, "containers"))
    {
        snprintf(path, sizeof(path), "spec.containers[%d]", i++);
        if ((rc = container_requests(it, status, src, infeasible, defaults, path, &c, e)) != 0)
            goto out;
        rc = rl_add(reqs, &c);
        rl_free(&c);
        if (rc)
            goto out;
    }
    i = 0;
    cJSON_ArrayForEach(it, get(spec, "initContainers"))
    {
        const char *policy = get_str(it, "restartPolicy");
        snprintf(path, sizeof(path), "spec.initContainers[%d]", i++);
        if ((rc = container_requests(it, status, src, infeasible, defaults, path, &c, e)) != 0)
            goto out;
        if (policy && strcmp(policy, "Always") == 0) {
            /* A sidecar keeps running: it adds to the pod and to every later init container. */
            if ((rc = rl_add(reqs, &c)) != 0 || (rc = rl_add(&sidecars, &c)) != 0)
                goto out;
            rc = rl_max(&init_max, &sidecars);
        } else {
            if ((rc = rl_add(&c, &sidecars)) != 0)
                goto out;
            rc = rl_max(&init_max, &c);
        }
        rl_free(&c);
        if (rc)
            goto out;
    }
    rc = rl_max(reqs, &init_max);
out:
    rl_free(&init_max);
    rl_free(&sidecars);
    rl_free(&c);
    if (rc)
        rl_free(reqs);
    return rc;
}

/* IsPodResizeInfeasible: the PodResizePending condition's reason is Infeasible. */
static int resize_infeasible(const cJSON *status)
{
    const cJSON *cond;
    cJSON_ArrayForEach(cond, get(status, "conditions"))
    {
        const char *type = get_str(cond, "type"), *reason = get_str(cond, "reason");
        if (type && strcmp(type, "PodResizePending") == 0)
            return reason && strcmp(reason, "Infeasible") == 0;
    }
    return 0;
}

static int is_hugepages(ks_sym name)
{
    const char *s = ks__sym_str(name);
    return s && strncmp(s, "hugepages-", 10) == 0;
}

/* The pod-level requests after the API server's defaulting from pod-level limits (for the
 * supported pod-level resources: cpu, memory, hugepages-*); *set: IsPodLevelRequestsSet. */
static int pod_level_requests(const cJSON *spec, rlist *out, int *set, parse_ctx *e)
{
    rlist lim;
    const cJSON *res = get(spec, "resources");
    int rc;
    if ((rc = parse_resource_list(get(res, "requests"), "spec.resources.requests", out, e)) != 0)
        return rc;
    if ((rc = parse_resource_list(get(res, "limits"), "spec.resources.limits", &lim, e)) != 0) {
        rl_free(out);
        return rc;
    }
    default_cpu_memory_from_limits(out, &lim);
    rl_free(&lim);
    *set = out->has_cpu || out->has_memory;
    for (size_t i = 0; i < out->n && !*set; i++)
        *set = is_hugepages(out->sc[i].name);
    return 0;
}

/* applyPodLevelResources: the supported pod-level resources that eff lists replace the
 * containers' aggregate. */
static int apply_pod_level(rlist *reqs, const rlist *eff)
{
    if (eff->has_cpu) {
        reqs->cpu = eff->cpu;
        reqs->has_cpu = 1;
    }
    if (eff->has_memory) {
        reqs->memory = eff->memory;
        reqs->has_memory = 1;
    }
    for (size_t i = 0; i < eff->n; i++) {
        if (!is_hugepages(eff->sc[i].name))
            continue;
        int64_t *slot = rl_scalar_slot(reqs, eff->sc[i].name);
        if (!slot)
            return KS_ENOMEM;
        *slot = eff->sc[i].value;
    }
    return 0;
}

/* Upstream resourcehelper.PodRequests (component-helpers v0.37) with the options the v1.37
 * scheduler passes: UseStatusResources (InPlacePodVerticalScaling, GA),
 * InPlacePodLevelResourcesVerticalScalingEnabled (Beta, on), pod-level resources
 * (PodLevelResources, Beta, on), overhead added; `defaults` are the NonMissingContainerRequests.
 *
 * The containers' aggregate is max(spec, actuated, allocated) per resource (without the spec
 * when the resize is Infeasible), where actuated / allocated come from the pod-level
 * status.resources.requests / status.allocatedResources when the kubelet set them, else from the
 * containers' statuses. Pod-level requests then replace cpu, memory and hugepages-*, as
 * max(spec, status.resources.requests, status.allocatedResources) once status.resources is set.
 * A pod without status resources (every pending pod) gets its spec requests. *pod_level: whether
 * spec.resources.requests sets a pod-level resource. */
static int pod_requests(const cJSON *spec, const cJSON *status, unsigned defaults, rlist *reqs,
                        int *pod_level, parse_ctx *e)
{
    /* NodeResourcesFit's scorer view (DEF_FIT_SCORER): no status resources, no pod level. */
    int fit_scorer = (defaults & DEF_FIT_SCORER) != 0;
    defaults &= DEF_BOTH;
    if (fit_scorer)
        status = NULL;
    rlist spec_r, alloc_r = {0}, act_r = {0}, pl = {0};
    const cJSON *st_alloc = set_list(status, "allocatedResources");
    const cJSON *st_res = set_list(status, "resources");
    const cJSON *st_req = set_list(st_res, "requests");
    int infeasible = resize_infeasible(status), rc;
    memset(reqs, 0, sizeof(*reqs));
    if ((rc = aggregate_containers(spec, status, SRC_SPEC, infeasible, defaults, &spec_r, e)) != 0)
        return rc;
    if (st_alloc && st_res && st_req) {
        /* The kubelet's pod-level aggregates (no NonMissing defaults applied to them). */
        if ((rc = parse_resource_list(st_alloc, "status.allocatedResources", &alloc_r, e)) != 0 ||
            (rc = parse_resource_list(st_req, "status.resources.requests", &act_r, e)) != 0)
            goto out;
    } else if ((rc = aggregate_containers(spec, status, SRC_ALLOCATED, infeasible, defaults,
                                          &alloc_r, e)) != 0 ||
               (rc = aggregate_containers(spec, status, SRC_ACTUATED, infeasible, defaults, &act_r,
                                          e)) != 0)
        goto out;
    if ((!infeasible && (rc = rl_max(reqs, &spec_r)) != 0) || (rc = rl_max(reqs, &act_r)) != 0 ||
        (rc = rl_max(reqs, &alloc_r)) != 0)
        goto out;
    if ((rc = pod_level_requests(spec, &pl, pod_level, e)) != 0)
        goto out;
    if (*pod_level && !fit_scorer) {
        if (st_res) {
            /* effectivePodLevelResources: max(spec unless Infeasible, actuated, allocated). */
            rlist eff = {0}, st_r = {0}, st_a = {0};
            if ((rc = parse_resource_list(st_req, "status.resources.requests", &st_r, e)) == 0 &&
                (rc = parse_resource_list(st_alloc, "status.allocatedResources", &st_a, e)) == 0 &&
                (infeasible || (rc = rl_max(&eff, &pl)) == 0) && (rc = rl_max(&eff, &st_r)) == 0 &&
                (rc = rl_max(&eff, &st_a)) == 0)
                rc = apply_pod_level(reqs, &eff);
            rl_free(&eff);
            rl_free(&st_r);
            rl_free(&st_a);
        } else {
            rc = apply_pod_level(reqs, &pl);
        }
        if (rc)
            goto out;
    }
    {
        rlist overhead;
        if ((rc = parse_resource_list(get(spec, "overhead"), "spec.overhead", &overhead, e)) != 0)
            goto out;
        rc = rl_add(reqs, &overhead);
        rl_free(&overhead);
    }
out:
    rl_free(&spec_r);
    rl_free(&alloc_r);
    rl_free(&act_r);
    rl_free(&pl);
    if (rc)
        rl_free(reqs);
    return rc;
}

/* The pod's three request lists: requests (upstream PodRequests, no defaults); nonzero_requests
 * (NonMissingContainerRequests 100m / 200Mi for every container, as NodeResourcesFit's scorer
 * calculatePodResourceRequest computes them: upstream v1.37 builds that scorer without its
 * feature flags, so it reads neither pod-level requests nor status resources, SkipPodLevelResources
 * and no UseStatusResources; BalancedAllocation's scorer has them and reads `requests`);
 * node_nonzero_requests (PodInfo.CalculateResource's
 * non-zero variant, what the pod adds to its node's NonZeroRequested: with pod-level requests
 * set, only a resource missing from the whole pod's requests gets the container defaults). */
static int pod_all_requests(const cJSON *spec, const cJSON *status, ks_pod *pod, parse_ctx *e)
{
    rlist reqs, nz, node_nz;
    int pod_level = 0, rc;
    unsigned node_defaults;
    if ((rc = pod_requests(spec, status, 0, &reqs, &pod_level, e)) != 0)
        return rc;
    node_defaults =
        !pod_level ? DEF_BOTH : (reqs.has_cpu ? 0u : DEF_CPU) | (reqs.has_memory ? 0u : DEF_MEMORY);
    int ignored;
    if ((rc = pod_requests(spec, status, DEF_BOTH | DEF_FIT_SCORER, &nz, &ignored, e)) != 0) {
        rl_free(&reqs);
        return rc;
    }
    rc = pod_requests(spec, status, node_defaults, &node_nz, &pod_level, e);
    if (rc) {
        rl_free(&reqs);
        rl_free(&nz);
        return rc;
    }
    rl_to_resources(&reqs, &pod->requests);
    rl_to_resources(&nz, &pod->nonzero_requests);
    rl_to_resources(&node_nz, &pod->node_nonzero_requests);
    return 0;
}

static ks_taint_effect parse_effect(const char *s, int *ok)
{
    *ok = 1;
    if (!s || !*s)
        return KS_EFFECT_ALL;
    if (strcmp(s, "NoSchedule") == 0)
        return KS_EFFECT_NO_SCHEDULE;
    if (strcmp(s, "PreferNoSchedule") == 0)
        return KS_EFFECT_PREFER_NO_SCHEDULE;
    if (strcmp(s, "NoExecute") == 0)
        return KS_EFFECT_NO_EXECUTE;
    *ok = 0;
    return KS_EFFECT_ALL;
}

#define EFFECTS_SUPPORTED "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""

/* The toleration rules that go beyond reading it (checked mode only), in the order upstream
 * ValidateTolerations checks them. An empty key matches every taint, which only makes sense with
 * Exists; tolerationSeconds only means something for NoExecute; Exists ignores the value, so a
 * value there is a mistake. */
static int check_toleration_rules(const cJSON *it, const char *op, const char *effect,
                                  const char *path, parse_ctx *e)
{
    const char *key = get_str(it, "key"), *value = get_str(it, "value");
    const cJSON *secs = get(it, "tolerationSeconds");
    if ((!key || !*key) && strcmp(op, "Exists") != 0)
        return fail(e,
                    "%s.operator: Invalid value: \"%s\": operator must be Exists when `key` is "
                    "empty, which means \"match all values and all keys\"",
                    path, op);
    if (secs && !cJSON_IsNull(secs) && strcmp(effect, "NoExecute") != 0)
        return fail(e,
                    "%s.effect: Invalid value: \"%s\": effect must be 'NoExecute' when "
                    "`tolerationSeconds` is set",
                    path, effect);
    if (strcmp(op, "Exists") == 0 && value && *value)
        return fail(e,
                    "%s.operator: Invalid value: \"%s\": value must be empty when `operator` is "
                    "'Exists'",
                    path, value);
    return 0;
}

/* One toleration. An operator or effect kubesched has no meaning for is refused in both modes
 * (there is nothing to read it as); the other rules only when checked, and before these two, as
 * upstream orders them. */
static int check_toleration(const cJSON *it, const char *path, parse_ctx *e)
{
    const char *op = get_str(it, "operator"), *effect = get_str(it, "effect");
    int ok, rc;
    if (!op)
        op = "";
    if (!effect)
        effect = "";
    if (e->checked && (rc = check_toleration_rules(it, op, effect, path, e)) != 0)
        return rc;
    if (*op && strcmp(op, "Equal") != 0 && strcmp(op, "Exists") != 0)
        return fail(e,
                    "%s.operator: Unsupported value: \"%s\": supported values: \"Equal\", "
                    "\"Exists\"",
                    path, op);
    (void)parse_effect(effect, &ok); /* empty: every effect */
    if (!ok)
        return fail(e, "%s.effect: Unsupported value: \"%s\": " EFFECTS_SUPPORTED, path, effect);
    return 0;
}

static int parse_tolerations(const cJSON *arr, ks_pod *pod, parse_ctx *e)
{
    const cJSON *it;
    size_t i = 0;
    int n = cJSON_GetArraySize(arr);
    if (!cJSON_IsArray(arr) || n == 0)
        return 0;
    pod->tolerations = calloc((size_t)n, sizeof(ks_toleration));
    if (!pod->tolerations)
        return KS_ENOMEM;
    cJSON_ArrayForEach(it, arr)
    {
        ks_toleration *t = &pod->tolerations[i];
        const char *op = get_str(it, "operator");
        const cJSON *secs = get(it, "tolerationSeconds");
        char path[64];
        int ok, rc;
        snprintf(path, sizeof(path), "spec.tolerations[%zu]", i);
        if ((rc = check_toleration(it, path, e)) != 0)
            return rc;
        t->key = get_sym(e, it, "key", "");
        t->value = get_sym(e, it, "value", "");
        t->op = op && strcmp(op, "Exists") == 0 ? KS_TOL_EXISTS : KS_TOL_EQUAL;
        t->effect = parse_effect(get_str(it, "effect"), &ok);
        if (cJSON_IsNumber(secs)) {
            t->has_seconds = 1;
            t->toleration_seconds = ks__sat_i64(secs->valuedouble);
        }
        i++;
    }
    pod->ntolerations = i;
    return 0;
}

/* Node affinity: all arrays live in one block (affinity_storage) sized in a first pass. */
typedef struct {
    char *base;
    size_t used, cap;
} arena;

static void *arena_take(arena *a, size_t n, size_t align)
{
    size_t off = (a->used + align - 1) & ~(align - 1);
    if (off + n > a->cap)
        return NULL;
    a->used = off + n;
    return a->base + off;
}

static size_t reqs_size(const cJSON *reqs)
{
    size_t n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, reqs)
    {
        n += sizeof(ks_selector_req) + 8;
        n += (size_t)cJSON_GetArraySize(get(r, "values")) * sizeof(ks_sym) + 8;
    }
    return n;
}

static size_t term_size(const cJSON *term)
{
    return reqs_size(get(term, "matchExpressions")) + reqs_size(get(term, "matchFields")) + 16;
}

static int parse_op(const char *s, ks_selector_op *op)
{
    static const char *names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    for (int i = 0; i < 6; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *op = (ks_selector_op)i;
            return 0;
        }
    return -1;
}

const char *ks__node_req_problem(ks_selector_op op, ks_sym key, int nvalues)
{
    if ((op == KS_OP_IN || op == KS_OP_NOT_IN) && nvalues == 0)
        return ".values: Required value: must be specified when `operator` is 'In' or 'NotIn'";
    if ((op == KS_OP_EXISTS || op == KS_OP_DOES_NOT_EXIST) && nvalues > 0)
        return ".values: Forbidden: may not be specified when `operator` is 'Exists' or "
               "'DoesNotExist'";
    if ((op == KS_OP_GT || op == KS_OP_LT) && nvalues != 1)
        return ".values: Required value: must be specified single value when `operator` is 'Lt' "
               "or 'Gt'";
    if (key == KS_SYM_EMPTY)
        return ".key: Invalid value: \"\": name part must be non-empty";
    return NULL;
}

static int parse_reqs(const cJSON *arr, const char *path, int fields, arena *a, uint32_t *n,
                      const ks_selector_req **out, parse_ctx *e)
{
    const cJSON *r;
    uint32_t i = 0;
    int count = cJSON_GetArraySize(arr);
    ks_selector_req *reqs;
    *n = 0;
    *out = NULL;
    if (!cJSON_IsArray(arr) || count == 0)
        return 0;
    reqs = arena_take(a, (size_t)count * sizeof(*reqs), 8);
    cJSON_ArrayForEach(r, arr)
    {
        const cJSON *v;
        int nv = cJSON_GetArraySize(get(r, "values")), j = 0;
        ks_sym *vals = nv ? arena_take(a, (size_t)nv * sizeof(ks_sym), 8) : NULL;
        char rp[256];
        snprintf(rp, sizeof(rp), "%s[%u]", path, i);
        reqs[i].key = get_sym(e, r, "key", "");
        if (parse_op(get_str(r, "operator"), &reqs[i].op) != 0)
            return fail(e, "%s.operator: Invalid value: \"%s\": not a valid selector operator", rp,
                        get_str(r, "operator") ? get_str(r, "operator") : "");
        const char *problem =
            e->checked && !fields ? ks__node_req_problem(reqs[i].op, reqs[i].key, nv) : NULL;
        if (problem)
            return fail(e, "%s%s", rp, problem);
        cJSON_ArrayForEach(v, get(r, "values"))
        {
            char buf[64];
            const char *s =
                cJSON_IsString(v) ? v->valuestring : number_text(v->valuedouble, buf, sizeof(buf));
            vals[j++] = intern(e, s);
        }
        reqs[i].nvalues = (uint32_t)nv;
        reqs[i].values = vals;
        i++;
    }
    *n = i;
    *out = reqs;
    return 0;
}

static int parse_term(const cJSON *t, const char *path, arena *a, ks_node_selector_term *term,
                      parse_ctx *e)
{
    char p[200];
    int rc;
    snprintf(p, sizeof(p), "%s.matchExpressions", path);
    if ((rc = parse_reqs(get(t, "matchExpressions"), p, 0, a, &term->nexprs, &term->exprs, e)) != 0)
        return rc;
    snprintf(p, sizeof(p), "%s.matchFields", path);
    return parse_reqs(get(t, "matchFields"), p, 1, a, &term->nfields, &term->fields, e);
}

static int parse_node_affinity(const cJSON *na, ks_pod *pod, parse_ctx *e)
{
    const cJSON *req = get(na, "requiredDuringSchedulingIgnoredDuringExecution");
    const cJSON *terms = get(req, "nodeSelectorTerms");
    const cJSON *pref = get(na, "preferredDuringSchedulingIgnoredDuringExecution");
    const cJSON *it;
    size_t size = sizeof(ks_node_affinity) + 16;
    arena a;
    uint32_t i;
    int rc;
    if (!cJSON_IsObject(na))
        return 0;
    cJSON_ArrayForEach(it, terms) size += sizeof(ks_node_selector_term) + term_size(it);
    cJSON_ArrayForEach(it, pref) size +=
        sizeof(ks_preferred_term) + term_size(get(it, "preference"));
    a.base = calloc(1, size);
    a.used = 0;
    a.cap = size;
    if (!a.base)
        return KS_ENOMEM;
    pod->affinity_storage = a.base;
    ks_node_affinity *aff = arena_take(&a, sizeof(*aff), 8);
    pod->node_affinity = aff;
    if (cJSON_IsObject(req)) {
        int n = cJSON_GetArraySize(terms);
        /* No term would match no node: upstream requires one. (Read leniently, none matches no
         * node, as upstream's NodeAffinity plugin treats it.) */
        if (e->checked && n == 0)
            return fail(e,
                        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                        "nodeSelectorTerms: Required value: must have at least one node selector "
                        "term");
        ks_node_selector_term *ts = n ? arena_take(&a, (size_t)n * sizeof(*ts), 8) : NULL;
        aff->has_required = 1;
        i = 0;
        cJSON_ArrayForEach(it, terms)
        {
            char p[160];
            snprintf(p, sizeof(p),
                     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                     "nodeSelectorTerms[%u]",
                     i);
            if ((rc = parse_term(it, p, &a, &ts[i], e)) != 0)
                return rc;
            i++;
        }
        aff->nrequired = i;
        aff->required = ts;
    }
    {
        int n = cJSON_GetArraySize(pref);
        ks_preferred_term *ps = n ? arena_take(&a, (size_t)n * sizeof(*ps), 8) : NULL;
        i = 0;
        cJSON_ArrayForEach(it, pref)
        {
            char p[160];
            snprintf(p, sizeof(p),
                     "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%"
                     "u]",
                     i);
            if ((rc = get_int32(e, it, "weight", p, &ps[i].weight)) != 0)
                return rc;
            /* The weight is added to a node's score; upstream allows 1..100 (missing is 0). Read
             * leniently, a 0 adds nothing, as upstream's plugin scores it. */
            if (e->checked && (ps[i].weight < 1 || ps[i].weight > 100))
                return fail(e, "%s.weight: Invalid value: %d: must be in the range 1-100", p,
                            (int)ps[i].weight);
            strncat(p, ".preference", sizeof(p) - strlen(p) - 1);
            if ((rc = parse_term(get(it, "preference"), p, &a, &ps[i].term, e)) != 0)
                return rc;
            i++;
        }
        aff->npreferred = i;
        aff->preferred = ps;
    }
    return 0;
}

/* A container's ports as upstream validateContainerPorts checks the fields read here: a hostPort,
 * when set (0 is unset), is a port number; the protocol, when set (empty defaults to TCP), is one
 * the API knows. A hostPort of 70000 would otherwise never conflict with anything. Those two rules
 * only when checked; a hostPort that is no int32 is refused in both modes (it could not be
 * converted). */
static int check_ports(const cJSON *ports, const char *path, parse_ctx *e)
{
    const cJSON *p;
    int i = 0, rc;
    cJSON_ArrayForEach(p, ports)
    {
        char pp[96];
        int32_t hp;
        const char *proto = get_str(p, "protocol");
        snprintf(pp, sizeof(pp), "%s.ports[%d]", path, i++);
        if ((rc = get_int32(e, p, "hostPort", pp, &hp)) != 0)
            return rc;
        if (!e->checked)
            continue;
        if (hp != 0 && (hp < 1 || hp > 65535))
            return fail(e, "%s.hostPort: Invalid value: %d: must be between 1 and 65535, inclusive",
                        pp, (int)hp);
        if (proto && *proto && strcmp(proto, "TCP") != 0 && strcmp(proto, "UDP") != 0 &&
            strcmp(proto, "SCTP") != 0)
            return fail(e,
                        "%s.protocol: Unsupported value: \"%s\": supported values: \"SCTP\", "
                        "\"TCP\", \"UDP\"",
                        pp, proto);
    }
    return 0;
}

/* A container's restartPolicyRules name the RestartAllContainers action (upstream
 * restartallcontainers.InferForScheduling). */
static int restarts_all_containers(const cJSON *c)
{
    const cJSON *rule;
    cJSON_ArrayForEach(rule, get(c, "restartPolicyRules"))
    {
        const char *action = get_str(rule, "action");
        if (action && strcmp(action, "RestartAllContainers") == 0)
            return 1;
    }
    return 0;
}

/* A container mounts a volume with a non-empty bindMountOptions (upstream
 * volumebindmountoptions.InferForScheduling: len(BindMountOptions) > 0). */
static int has_bind_mount_options(const cJSON *c)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, get(c, "volumeMounts"))
    {
        if (cJSON_GetArraySize(get(m, "bindMountOptions")) > 0)
            return 1;
    }
    return 0;
}

/* The spec facts behind ks_pod_spec_flags (what NodeDeclaredFeatures infers from, component-helpers
 * nodedeclaredfeatures v0.37) and the image volumes (ImageLocality counts them, v1.37). */
static int parse_spec_facts(const cJSON *spec, ks_pod *pod, parse_ctx *e)
{
    static const char *const lists[] = {"initContainers", "containers", "ephemeralContainers"};
    const cJSON *c, *v, *hu = get(spec, "hostUsers");
    size_t nvol = 0;
    if (cJSON_IsTrue(get(spec, "hostNetwork")))
        pod->spec_flags |= KS_POD_SPEC_HOST_NETWORK;
    if (cJSON_IsFalse(hu))
        pod->spec_flags |= KS_POD_SPEC_HOST_USERS_FALSE;
    for (int l = 0; l < 3; l++)
        cJSON_ArrayForEach(c, get(spec, lists[l]))
        {
            /* restartPolicyRules exist on containers and init containers only. */
            if (l < 2 && restarts_all_containers(c))
                pod->spec_flags |= KS_POD_SPEC_RESTART_ALL_CONTAINERS;
            if (has_bind_mount_options(c))
                pod->spec_flags |= KS_POD_SPEC_BIND_MOUNT_OPTIONS;
        }
    if (cJSON_GetArraySize(get(spec, "resourceClaims")) > 0)
        pod->uses |= KS__POD_USES_RESOURCE_CLAIMS;
    cJSON_ArrayForEach(v, get(spec, "volumes"))
    {
        if (cJSON_IsObject(get(v, "image")))
            nvol++;
        /* a generic ephemeral volume is a claim too, made by the ephemeral volume controller */
        if (cJSON_IsObject(get(v, "persistentVolumeClaim")) || cJSON_IsObject(get(v, "ephemeral")))
            pod->uses |= KS__POD_USES_VOLUME_CLAIMS;
    }
    if (!nvol)
        return 0;
    if (!(pod->image_volumes = calloc(nvol, sizeof(ks_sym))))
        return KS_ENOMEM;
    cJSON_ArrayForEach(v, get(spec, "volumes"))
    {
        const cJSON *img = get(v, "image");
        if (cJSON_IsObject(img))
            pod->image_volumes[pod->nimage_volumes++] = get_sym(e, img, "reference", "");
    }
    return 0;
}

static int parse_containers_extra(const cJSON *spec, ks_pod *pod, parse_ctx *e)
{
    static const char *const lists[] = {"initContainers", "containers"};
    size_t nimg = 0, nports = 0;
    const cJSON *c, *p;
    char cpath[64];
    int idx[2] = {0, 0};
    for (int l = 0; l < 2; l++)
        cJSON_ArrayForEach(c, get(spec, lists[l]))
        {
            nimg++;
            nports += (size_t)cJSON_GetArraySize(get(c, "ports"));
        }
    if (nimg && !(pod->images = calloc(nimg, sizeof(ks_sym))))
        return KS_ENOMEM;
    if (nports && !(pod->host_ports = calloc(nports, sizeof(ks_host_port))))
        return KS_ENOMEM;
    for (int l = 0; l < 2; l++)
        cJSON_ArrayForEach(c, get(spec, lists[l]))
        {
            const char *img = get_str(c, "image");
            const char *policy = get_str(c, "restartPolicy");
            int rc;
            if (img)
                pod->images[pod->nimages++] = intern(e, img);
            /* Every container's ports are checked (the API server refuses the pod whichever
             * container has a bad one) before the host ports are taken. */
            snprintf(cpath, sizeof(cpath), "spec.%s[%d]", lists[l], idx[l]++);
            if ((rc = check_ports(get(c, "ports"), cpath, e)) != 0)
                return rc;
            /* Host ports: regular containers and restartable (sidecar) init containers only; a
             * regular init container has exited before the others start (upstream NodePorts,
             * kubernetes#132040). */
            if (l == 0 && !(policy && strcmp(policy, "Always") == 0))
                continue;
            cJSON_ArrayForEach(p, get(c, "ports"))
            {
                const cJSON *hp = get(p, "hostPort");
                if (!cJSON_IsNumber(hp) || hp->valuedouble <= 0)
                    continue;
                ks_host_port *h = &pod->host_ports[pod->nports++];
                h->port = ks__sat_i32(hp->valuedouble);
                h->protocol = get_sym(e, p, "protocol", "TCP");
                if (h->protocol == KS_SYM_EMPTY) /* as upstream HostPortInfo's sanitize */
                    h->protocol = ks__intern("TCP");
                h->host_ip = get_sym(e, p, "hostIP", "0.0.0.0");
                if (h->host_ip == KS_SYM_EMPTY)
                    h->host_ip = ks__intern("0.0.0.0");
            }
        }
    return 0;
}

static void ks__pod_free_(ks_pod *pod);
static int parse_resource_claims(const cJSON *spec, const cJSON *status, ks_pod *pod);
static int parse_pod_containers(const cJSON *spec, ks_pod *pod);

/* Pod (anti-)affinity and topology spread constraints: shared between identical specs. */
static int parse_pod_affinity_and_spread(const cJSON *spec, ks_pod *pod, parse_ctx *e)
{
    int rc = ks__shared_pod_affinity(get(spec, "affinity"), e->checked, &pod->pod_affinity,
                                     &pod->affinity_ref, e->buf, e->len);
    if (rc != 0)
        return rc;
    return ks__shared_spread(get(spec, "topologySpreadConstraints"), e->checked, &pod->spread,
                             &pod->nspread, &pod->spread_ref, e->buf, e->len);
}

/* Labels: the sorted array is replaced by the shared copy (pods of a template share one). */
static int share_labels(ks_pod *pod)
{
    ks_label *own = (ks_label *)pod->labels;
    if (pod->nlabels == 0)
        return 0;
    pod->labels = ks__shared_labels(own, pod->nlabels, &pod->labels_ref);
    free(own);
    pod->labels_owned = 0;
    return pod->labels ? 0 : KS_ENOMEM;
}

static int pod_from_json(const cJSON *obj, int checked, ks_pod **out, char *err, size_t errlen)
{
    parse_ctx e = {err, errlen, NULL, checked};
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec"),
                *status = get(obj, "status");
    const char *name = get_str(meta, "name"), *ns = get_str(meta, "namespace"), *uid;
    ks_pod *pod;
    int rc;
    char buf[512];

    *out = NULL;
    if (!name || !*name)
        return fail(&e, "metadata.name: required for a Pod");
    if (!ns || !*ns)
        ns = "default";
    pod = calloc(1, sizeof(*pod));
    if (!pod)
        return KS_ENOMEM;
    atomic_init(&pod->refs, 1);
    e.syms = &pod->syms;
    pod->name = intern(&e, name);
    pod->ns = intern(&e, ns);
    snprintf(buf, sizeof(buf), "%s/%s", ns, name);
    pod->key = strdup(buf);
    uid = get_str(meta, "uid");
    pod->uid = xstrdup(uid && *uid ? uid : buf); /* manifests without a uid: namespace/name */
    pod->resource_version = xstrdup(get_str(meta, "resourceVersion"));
    pod->terminating =
        get(meta, "deletionTimestamp") != NULL && !cJSON_IsNull(get(meta, "deletionTimestamp"));
    pod->scheduler_name = get_sym(&e, spec, "schedulerName", "default-scheduler");
    if (pod->scheduler_name == KS_SYM_EMPTY)
        pod->scheduler_name = ks__intern("default-scheduler");
    pod->node_name = get_sym(&e, spec, "nodeName", "");
    pod->nominated_node_name = get_sym(&e, status, "nominatedNodeName", "");
    pod->phase = get_sym(&e, status, "phase", "");
    {
        const char *pp = get_str(spec, "preemptionPolicy");
        pod->preemption_never = pp && strcmp(pp, "Never") == 0;
        pod->start_time_ns = ks__parse_time_ns(get_str(status, "startTime"));
    }
    if (!pod->key || !pod->uid || !pod->resource_version) {
        rc = KS_ENOMEM;
        goto fail;
    }
    if ((rc = get_int32(&e, spec, "priority", "spec", &pod->priority)) != 0)
        goto fail;
    pod->labels_owned = 1;
    if ((rc = parse_string_map(get(meta, "labels"), "metadata.labels", (ks_label **)&pod->labels,
                               &pod->nlabels, &e)) ||
        (rc = share_labels(pod)) ||
        (rc = parse_string_map(get(meta, "annotations"), "metadata.annotations", &pod->annotations,
                               &pod->nannotations, &e)) ||
        (rc = parse_string_map(get(spec, "nodeSelector"), "spec.nodeSelector", &pod->node_selector,
                               &pod->nselector, &e)) ||
        (rc = parse_tolerations(get(spec, "tolerations"), pod, &e)) ||
        (rc = parse_node_affinity(get(get(spec, "affinity"), "nodeAffinity"), pod, &e)) ||
        (rc = parse_pod_affinity_and_spread(spec, pod, &e)) ||
        (rc = parse_containers_extra(spec, pod, &e)) || (rc = parse_spec_facts(spec, pod, &e)) ||
        (rc = ks__pod_volumes_parse(get(spec, "volumes"), name, checked, &pod->volume_pool,
                                    &pod->syms, &pod->volumes, &pod->nvolumes, err, errlen)) ||
        (rc = pod_all_requests(spec, status, pod, &e)) ||
        (rc = parse_resource_claims(spec, status, pod)) || (rc = parse_pod_containers(spec, pod)))
        goto fail;
    {
        const cJSON *g;
        int n = cJSON_GetArraySize(get(spec, "schedulingGates"));
        if (n > 0 && !(pod->gates = calloc((size_t)n, sizeof(ks_sym)))) {
            rc = KS_ENOMEM;
            goto fail;
        }
        cJSON_ArrayForEach(g, get(spec, "schedulingGates"))
        {
            const char *gn = get_str(g, "name");
            if (gn)
                pod->gates[pod->ngates++] = intern(&e, gn);
        }
    }
    {
        /* spec.schedulingGroup: a pod of a PodGroup (v1.37 GenericWorkload). The API server
         * requires podGroupName there (a DNS subdomain); a group given without one is read as
         * none, as the scheduler could not look it up. */
        const char *pg = get_str(get(spec, "schedulingGroup"), "podGroupName");
        pod->scheduling_group = pg ? intern(&e, pg) : KS_SYM_ABSENT;
    }
    /* A pod with no containers contributes nothing, including the non-zero defaults. */
    pod->json = cJSON_PrintUnformatted(obj);
    if (!pod->json) {
        rc = KS_ENOMEM;
        goto fail;
    }
    *out = pod;
    return 0;
fail:
    if (rc == KS_ENOMEM)
        snprintf(err, errlen, "out of memory parsing pod %s/%s", ns, name);
    ks__pod_free_(pod);
    return rc;
}

int ks__pod_from_json(const cJSON *obj, ks_pod **out, char *err, size_t errlen)
{
    return pod_from_json(obj, 0, out, err, errlen);
}

int ks__pod_from_json_checked(const cJSON *obj, ks_pod **out, char *err, size_t errlen)
{
    return pod_from_json(obj, 1, out, err, errlen);
}

/* A string of the pod's volume pool (NULL stays NULL). */
static const char *pool_str(ks_pod *pod, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = ks__mempool_alloc(&pod->volume_pool, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* spec.resourceClaims and what status.resourceClaimStatuses says of each (upstream
 * resourceclaim.Name reads both). */
static int parse_resource_claims(const cJSON *spec, const cJSON *status, ks_pod *pod)
{
    int n = cJSON_GetArraySize(get(spec, "resourceClaims"));
    if (n <= 0)
        return 0;
    pod->resource_claims =
        ks__mempool_alloc(&pod->volume_pool, (size_t)n * sizeof(ks_pod_resource_claim));
    if (!pod->resource_claims)
        return KS_ENOMEM;
    const cJSON *c, *st;
    cJSON_ArrayForEach(c, get(spec, "resourceClaims"))
    {
        ks_pod_resource_claim *r = &pod->resource_claims[pod->nresource_claims++];
        const char *name = get_str(c, "name");
        r->name = pool_str(pod, name ? name : "");
        r->resource_claim_name = pool_str(pod, get_str(c, "resourceClaimName"));
        r->resource_claim_template_name = pool_str(pod, get_str(c, "resourceClaimTemplateName"));
        if (!r->name)
            return KS_ENOMEM;
        cJSON_ArrayForEach(st, get(status, "resourceClaimStatuses"))
        {
            const char *sn = get_str(st, "name");
            if (sn && strcmp(sn, r->name) == 0) {
                r->has_status = 1;
                r->status_claim_name = pool_str(pod, get_str(st, "resourceClaimName"));
                break;
            }
        }
    }
    return 0;
}

/* upstream schedutil.IsDRAExtendedResourceName without the quota-name check the API server makes:
 * an extended resource (a '/' and not kubernetes.io/ native, not "requests.") or the implicit
 * name of a DeviceClass. */
static int dra_extended_name(const char *n)
{
    if (strncmp(n, "deviceclass.resource.kubernetes.io/", 35) == 0)
        return 1;
    return strchr(n, '/') && !strstr(n, "kubernetes.io/") && strncmp(n, "requests.", 9) != 0;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One container's scalar requests into c (pool), each with its index among all its request
 * names sorted (createResourceRequestAndMappings' ridx) and Quantity.AsInt64(). */
static int container_scalars(ks_pod *pod, const cJSON *reqs, ks_pod_container *c)
{
    int n = cJSON_GetArraySize(reqs);
    if (n <= 0)
        return 0;
    const char **names = calloc((size_t)n, sizeof(*names));
    ks_container_request *out =
        ks__mempool_alloc(&pod->volume_pool, (size_t)n * sizeof(ks_container_request));
    if (!names || !out) {
        free(names);
        return KS_ENOMEM;
    }
    const cJSON *it;
    int k = 0;
    cJSON_ArrayForEach(it, reqs) names[k++] = it->string;
    qsort(names, (size_t)n, sizeof(*names), cmp_cstr);
    for (int i = 0; i < n; i++) {
        const char *rn = names[i];
        if (!strcmp(rn, "cpu") || !strcmp(rn, "memory") || !strcmp(rn, "ephemeral-storage"))
            continue;
        char buf[64];
        int64_t value = 0, milli = 0;
        const char *text = quantity_text(get(reqs, rn), buf, sizeof(buf));
        int64_t v = 0;
        if (text && ks__quantity_parse(text, &value, &milli) == 0) {
            if (milli == INT64_MAX || milli == INT64_MIN)
                v = value; /* beyond milli-units: an integer */
            else if (milli % 1000 == 0)
                v = milli / 1000;
        }
        ks_sym sym = ks__intern(rn); /* resource names are pinned (parse_resource_list) */
        out[c->nrequests++] = (ks_container_request){sym, i, v};
    }
    free(names);
    c->requests = out;
    return 0;
}

static int parse_pod_containers(const cJSON *spec, ks_pod *pod)
{
    static const char *const lists[] = {"initContainers", "containers"};
    const cJSON *it, *r;
    int wanted = 0, total = 0;
    for (int l = 0; l < 2; l++)
        cJSON_ArrayForEach(it, get(spec, lists[l]))
        {
            total++;
            cJSON_ArrayForEach(r, get(get(it, "resources"), "requests")) wanted |=
                r->string && dra_extended_name(r->string);
        }
    if (!wanted)
        return 0;
    pod->containers =
        ks__mempool_alloc(&pod->volume_pool, (size_t)total * sizeof(ks_pod_container));
    if (!pod->containers)
        return KS_ENOMEM;
    for (int l = 0; l < 2; l++)
        cJSON_ArrayForEach(it, get(spec, lists[l]))
        {
            ks_pod_container *c = &pod->containers[pod->ncontainers++];
            const char *policy = get_str(it, "restartPolicy");
            memset(c, 0, sizeof(*c));
            c->name = pool_str(pod, get_str(it, "name") ? get_str(it, "name") : "");
            c->init = l == 0;
            c->sidecar = l == 0 && policy && strcmp(policy, "Always") == 0;
            if (!c->name || container_scalars(pod, get(get(it, "resources"), "requests"), c) != 0)
                return KS_ENOMEM;
        }
    return 0;
}

static void ks__pod_free_(ks_pod *pod)
{
    if (!pod)
        return;
    if (pod->base) {
        ks__symrefs_release(&pod->syms);
        ks__pod_unref(pod->base);
        free(pod);
        return;
    }
    ks__shared_release(pod->labels_ref);
    ks__shared_release(pod->affinity_ref);
    ks__shared_release(pod->spread_ref);
    ks__symrefs_release(&pod->syms);
    if (pod->labels_owned)
        free((void *)pod->labels);
    free(pod->uid);
    free(pod->key);
    free(pod->resource_version);
    free(pod->annotations);
    free(pod->node_selector);
    free(pod->tolerations);
    free(pod->images);
    free(pod->host_ports);
    free(pod->gates);
    free(pod->image_volumes);
    ks__mempool_free(&pod->volume_pool);
    free(pod->affinity_storage);
    ks__resources_free(&pod->requests);
    ks__resources_free(&pod->nonzero_requests);
    ks__resources_free(&pod->node_nonzero_requests);
    free(pod->json);
    free(pod);
}

ks_pod *ks__pod_ref(ks_pod *pod)
{
    if (pod)
        atomic_fetch_add_explicit(&pod->refs, 1, memory_order_relaxed);
    return pod;
}

void ks__pod_unref(ks_pod *pod)
{
    if (pod && atomic_fetch_sub_explicit(&pod->refs, 1, memory_order_acq_rel) == 1)
        ks__pod_free_(pod);
}

/* The assumed copy shares every array with the original (immutable) pod and holds a reference
 * to it: one small allocation per scheduled pod. */
ks_pod *ks__pod_with_node(const ks_pod *pod, ks_sym node)
{
    ks_pod *copy = malloc(sizeof(*copy));
    if (!copy)
        return NULL;
    memcpy(copy, pod, sizeof(*copy));
    atomic_init(&copy->refs, 1);
    /* The base keeps every symbol and shared part; the copy holds only the names it may change
     * (the node's entry in the cache may be gone before the copy is). */
    copy->syms = (ks__symrefs){0};
    copy->labels_ref = copy->affinity_ref = copy->spread_ref = NULL;
    copy->node_name = node;
    ks__symrefs_hold(&copy->syms, node);
    ks__symrefs_hold(&copy->syms, copy->nominated_node_name);
    copy->base = ks__pod_ref((ks_pod *)(pod->base ? pod->base : pod));
    return copy;
}

ks_pod *ks__pod_with_nominated(const ks_pod *pod, ks_sym node)
{
    ks_pod *copy = ks__pod_with_node(pod, pod->node_name);
    if (copy) {
        copy->nominated_node_name = node;
        ks__symrefs_hold(&copy->syms, node);
    }
    return copy;
}

int64_t ks__parse_time_ns(const char *s)
{
    struct tm tm;
    const char *p;
    int64_t frac_ns = 0, offset = 0;
    if (!s || !*s)
        return 0;
    memset(&tm, 0, sizeof(tm));
    p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return 0;
    if (*p == '.') {
        int64_t scale = 100000000;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac_ns += (*p - '0') * scale;
    }
    if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, hh = 0, mm = 0;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return 0;
        offset = sign * (int64_t)(hh * 3600 + mm * 60);
    } else if (*p != 'Z' && *p != 'z') {
        return 0;
    }
    /* Past year 2262 (or before 1677) seconds * 1e9 leaves int64: clamp, the order kept. */
    int64_t secs = (int64_t)timegm(&tm) - offset;
    if (secs >= INT64_MAX / 1000000000LL)
        return INT64_MAX;
    if (secs <= INT64_MIN / 1000000000LL)
        return INT64_MIN;
    return secs * 1000000000LL + frac_ns;
}

/* ---- nodes --------------------------------------------------------------------------------- */

static void node_free_(ks_node *node)
{
    if (!node)
        return;
    free(node->resource_version);
    free(node->labels);
    free(node->annotations);
    free(node->taints);
    free(node->images);
    free(node->image_names);
    free(node->declared_features);
    ks__resources_free(&node->allocatable);
    free(node->json);
    ks__symrefs_release(&node->syms);
    free(node);
}

static int parse_node_images(const cJSON *arr, ks_node *node)
{
    const cJSON *img, *nm;
    size_t nimg = 0, nnames = 0, k = 0;
    cJSON_ArrayForEach(img, arr)
    {
        nimg++;
        nnames += (size_t)cJSON_GetArraySize(get(img, "names"));
    }
    if (!nimg)
        return 0;
    node->images = calloc(nimg, sizeof(ks_node_image));
    node->image_names = calloc(nnames ? nnames : 1, sizeof(ks_sym));
    if (!node->images || !node->image_names)
        return KS_ENOMEM;
    ks_sym *names = node->image_names;
    cJSON_ArrayForEach(img, arr)
    {
        ks_node_image *ni = &node->images[node->nimages++];
        const cJSON *size = get(img, "sizeBytes");
        ni->names = &names[k];
        cJSON_ArrayForEach(nm, get(img, "names"))
        {
            if (cJSON_IsString(nm)) {
                names[k++] = ks__symrefs_intern(&node->syms, nm->valuestring);
                ni->nnames++;
            }
        }
        ni->size_bytes = cJSON_IsNumber(size) ? ks__sat_i64(size->valuedouble) : 0;
    }
    return 0;
}

/* status.declaredFeatures as listed (strings only). NodeInfo.SetNode maps them with TryMap, which
 * expects them sorted, as the API server keeps them; the plugin walks them the same way. */
static int parse_declared_features(const cJSON *arr, ks_node *node)
{
    const cJSON *f;
    size_t n = 0;
    cJSON_ArrayForEach(f, arr) { n += cJSON_IsString(f) ? 1 : 0; }
    if (!n)
        return 0;
    if (!(node->declared_features = calloc(n, sizeof(ks_sym))))
        return KS_ENOMEM;
    cJSON_ArrayForEach(f, arr)
    {
        if (cJSON_IsString(f))
            node->declared_features[node->ndeclared_features++] =
                ks__symrefs_intern(&node->syms, f->valuestring);
    }
    return 0;
}

/* A taint (upstream validateNodeTaints): its key is a label name, so not empty (checked mode
 * only); its effect is required (an empty one would read as "every effect", which only
 * tolerations may say) and one kubesched knows, in both modes: a taint has no other meaning. */
static int check_taint(const cJSON *t, size_t i, parse_ctx *e)
{
    const char *key = get_str(t, "key"), *effect = get_str(t, "effect");
    int ok;
    if (e->checked && (!key || !*key))
        return fail(e, "spec.taints[%zu].key: Invalid value: \"\": name part must be non-empty", i);
    if (!effect || !*effect)
        return fail(e, "spec.taints[%zu].effect: Required value", i);
    (void)parse_effect(effect, &ok);
    if (!ok)
        return fail(e, "spec.taints[%zu].effect: Unsupported value: \"%s\": " EFFECTS_SUPPORTED, i,
                    effect);
    return 0;
}

static int node_from_json(const cJSON *obj, int checked, ks_node **out, char *err, size_t errlen)
{
    parse_ctx e = {err, errlen, NULL, checked};
    const cJSON *meta = get(obj, "metadata"), *spec = get(obj, "spec"),
                *status = get(obj, "status");
    const char *name = get_str(meta, "name");
    const cJSON *alloc, *t;
    ks_node *node;
    rlist rl;
    int rc;

    *out = NULL;
    if (!name || !*name)
        return fail(&e, "metadata.name: required for a Node");
    node = calloc(1, sizeof(*node));
    if (!node)
        return KS_ENOMEM;
    atomic_init(&node->refs, 1);
    e.syms = &node->syms;
    node->name = intern(&e, name);
    node->resource_version = xstrdup(get_str(meta, "resourceVersion"));
    node->unschedulable = cJSON_IsTrue(get(spec, "unschedulable"));
    if ((rc = parse_string_map(get(meta, "labels"), "metadata.labels", &node->labels,
                               &node->nlabels, &e)) ||
        (rc = parse_string_map(get(meta, "annotations"), "metadata.annotations", &node->annotations,
                               &node->nannotations, &e)))
        goto fail;
    {
        int n = cJSON_GetArraySize(get(spec, "taints"));
        if (n > 0 && !(node->taints = calloc((size_t)n, sizeof(ks_taint)))) {
            rc = KS_ENOMEM;
            goto fail;
        }
        cJSON_ArrayForEach(t, get(spec, "taints"))
        {
            ks_taint *x = &node->taints[node->ntaints];
            if ((rc = check_taint(t, node->ntaints, &e)) != 0)
                goto fail;
            x->key = get_sym(&e, t, "key", "");
            x->value = get_sym(&e, t, "value", "");
            x->effect = parse_effect(get_str(t, "effect"), &(int){0});
            node->ntaints++;
        }
    }
    /* API-server defaulting: allocatable defaults to capacity. */
    alloc = get(status, "allocatable");
    if (!alloc || cJSON_IsNull(alloc))
        alloc = get(status, "capacity");
    if ((rc = parse_resource_list(
             alloc, alloc == get(status, "allocatable") ? "status.allocatable" : "status.capacity",
             &rl, &e)))
        goto fail;
    rl_to_resources(&rl, &node->allocatable);
    if ((rc = parse_node_images(get(status, "images"), node)) ||
        (rc = parse_declared_features(get(status, "declaredFeatures"), node)))
        goto fail;
    node->json = cJSON_PrintUnformatted(obj);
    if (!node->json || !node->resource_version) {
        rc = KS_ENOMEM;
        goto fail;
    }
    *out = node;
    return 0;
fail:
    if (rc == KS_ENOMEM)
        snprintf(err, errlen, "out of memory parsing node %s", name);
    node_free_(node);
    return rc;
}

int ks__node_from_json(const cJSON *obj, ks_node **out, char *err, size_t errlen)
{
    return node_from_json(obj, 0, out, err, errlen);
}

int ks__node_from_json_checked(const cJSON *obj, ks_node **out, char *err, size_t errlen)
{
    return node_from_json(obj, 1, out, err, errlen);
}

ks_node *ks__node_ref(ks_node *node)
{
    if (node)
        atomic_fetch_add_explicit(&node->refs, 1, memory_order_relaxed);
    return node;
}

void ks__node_unref(ks_node *node)
{
    if (node && atomic_fetch_sub_explicit(&node->refs, 1, memory_order_acq_rel) == 1)
        node_free_(node);
}
