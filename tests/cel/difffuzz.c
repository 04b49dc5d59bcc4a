/*
 * Differential fuzzing of core/cel against upstream: random DRA device selectors and random
 * devices, evaluated here and by tests/tools/cel-oracle (k8s.io/dynamic-resource-allocation/cel,
 * i.e. cel-go with Kubernetes' libraries, through a pipe). The two must agree on the outcome (a
 * match, no match, or an error) and on the error text; costs are compared and reported (the
 * exit status does not depend on them yet: docs/CEL.md, "Cost").
 * Expressions the oracle rejects at compile time for types (our evaluator has no checker, so it
 * reports those at match time) are counted apart.
 *
 *   cel_difffuzz ORACLE_BINARY CASES SEED     exit 1 on any disagreement, printing the cases
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cel/cel.h"

/* ---- a tiny deterministic PRNG (xorshift64*) ---------------------------------------------- */

static uint64_t rng;
static unsigned rnd(unsigned n)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (unsigned)((rng * 2685821657736338717ULL) >> 33) % n;
}
static const char *pick(const char *const *v, size_t n) { return v[rnd((unsigned)n)]; }
#define PICK(arr) pick(arr, sizeof arr / sizeof arr[0])

/* ---- expression text --------------------------------------------------------------------------
 */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = b->cap * 2 + (size_t)k + 64;
        b->p = realloc(b->p, b->cap);
    }
}

static const char *const domains[] = {"dra.example.com", "dra.example.com", "dra.example.com",
                                      "other.example.com", "missing.example.com"};
static const char *const str_lits[] = {"\"a100\"", "\"h100\"", "\"A100\"",  "\"\"",
                                       "\"gpu\"",  "\"a\"",    "\"1.5Gi\"", "\"1.2.3\"",
                                       "\"a,b\"",  "\" x \"",  "'é'",       "\"dra.example.com\""};
static const char *const quantity_lits[] = {
    "\"80Gi\"", "\"40Gi\"", "\"1.5\"",  "\"100m\"", "\"1e3\"",
    "\"0\"",    "\"2Ki\"",  "\"1k\"",   "\"-1\"",   "\"0.0000000001\"",
    "\"1024\"", "\"x\"",    "\"-2Ki\"", "\"-1.5\"", "\"9223372036854775807\"",
    "\"1Ei\""};
static const char *const semver_lits[] = {"\"1.0.0\"", "\"1.2.3\"", "\"2.0.0-rc.1\"",
                                          "\"0.0.1\"", "\"1.0\"",   "\"v1.2.3\""};
static const char *const regexes[] = {"\"^a\"",      "\"[0-9]+\"", "\"^(a|h)1[0-9]{2}$\"",
                                      "\"(?i)GPU\"", "\"x*\"",     "\"a$\"",
                                      "\"\\\\d\"",   "\"[\""};
static const char *const int_lits[] = {
    "0", "1", "2", "-1", "100", "9223372036854775807", "-9223372036854775808", "3"};
static const char *const cmp_ops[] = {"==", "!=", "<", "<=", ">", ">="};
static const char *const arith_ops[] = {"+", "-", "*", "/", "%"};

static void gen_bool(buf *b, int d);
static void gen_int(buf *b, int d);
static void gen_str(buf *b, int d);

static void attr_ref(buf *b, const char *name)
{
    if (rnd(4) == 0)
        put(b, "device.attributes[\"%s\"][\"%s\"]", PICK(domains), name);
    else
        put(b, "device.attributes[\"%s\"].%s", PICK(domains), name);
}

static void gen_quantity(buf *b, int d)
{
    switch (d <= 0 ? rnd(2) : rnd(5)) {
    case 0:
        put(b, "quantity(%s)", PICK(quantity_lits));
        break;
    case 1:
        put(b, "device.capacity[\"%s\"].%s", PICK(domains), rnd(2) ? "memory" : "cores");
        break;
    case 2:
        gen_quantity(b, d - 1);
        put(b, ".add(");
        gen_quantity(b, d - 1);
        put(b, ")");
        break;
    case 3:
        gen_quantity(b, d - 1);
        put(b, ".sub(");
        gen_int(b, 0);
        put(b, ")");
        break;
    default:
        put(b, "quantity(%s)", PICK(quantity_lits));
        break;
    }
}

static void gen_semver(buf *b, int d)
{
    switch (rnd(3)) {
    case 0:
        put(b, "semver(%s)", PICK(semver_lits));
        break;
    case 1:
        put(b, "semver(%s, true)", PICK(semver_lits));
        break;
    default:
        attr_ref(b, "version");
        break;
    }
}

static void gen_list_int(buf *b, int d)
{
    switch (d <= 0 ? rnd(2) : rnd(4)) {
    case 0:
        put(b, "[%s, %s]", PICK(int_lits), PICK(int_lits));
        break;
    case 1:
        attr_ref(b, "ids");
        break;
    case 2:
        gen_list_int(b, d - 1);
        put(b, ".map(x, x * 2)");
        break;
    default:
        gen_list_int(b, d - 1);
        put(b, ".filter(x, x > 1)");
        break;
    }
}

static void gen_list_str(buf *b, int d)
{
    switch (d <= 0 ? rnd(2) : rnd(3)) {
    case 0:
        put(b, "[%s, %s]", PICK(str_lits), PICK(str_lits));
        break;
    case 1:
        attr_ref(b, "tags");
        break;
    default:
        gen_str(b, d - 1);
        put(b, ".split(\",\")");
        break;
    }
}

static void gen_int(buf *b, int d)
{
    switch (d <= 0 ? rnd(2) : rnd(12)) {
    case 0:
        put(b, "%s", PICK(int_lits));
        break;
    case 1:
        attr_ref(b, "index");
        break;
    case 2:
    case 3:
        put(b, "(");
        gen_int(b, d - 1);
        put(b, " %s ", PICK(arith_ops));
        gen_int(b, d - 1);
        put(b, ")");
        break;
    case 4:
        put(b, "size(");
        gen_str(b, d - 1);
        put(b, ")");
        break;
    case 5:
        gen_list_int(b, d - 1);
        put(b, ".size()");
        break;
    case 6:
        gen_str(b, d - 1);
        put(b, ".indexOf(");
        gen_str(b, d - 1);
        put(b, ")");
        break;
    case 7:
        gen_quantity(b, d - 1);
        put(b, rnd(2) ? ".asInteger()" : ".sign()");
        break;
    case 8:
        gen_semver(b, d - 1);
        put(b, "%s", rnd(2) ? ".major()" : ".patch()");
        break;
    case 9:
        gen_list_int(b, d - 1);
        put(b, "%s", rnd(3) == 0 ? ".sum()" : rnd(2) ? ".min()" : ".max()");
        break;
    case 10:
        gen_list_int(b, d - 1);
        put(b, "[");
        gen_int(b, 0);
        put(b, "]");
        break;
    default:
        gen_quantity(b, d - 1);
        put(b, ".compareTo(");
        gen_quantity(b, d - 1);
        put(b, ")");
        break;
    }
}

static void gen_str(buf *b, int d)
{
    switch (d <= 0 ? rnd(3) : rnd(10)) {
    case 0:
        put(b, "%s", PICK(str_lits));
        break;
    case 1:
        put(b, "device.driver");
        break;
    case 2:
        attr_ref(b, "model");
        break;
    case 3:
        gen_str(b, d - 1);
        put(b, " + ");
        gen_str(b, d - 1);
        break;
    case 4:
        gen_str(b, d - 1);
        put(b, "%s", rnd(2) ? ".lowerAscii()" : ".upperAscii()");
        break;
    case 5:
        gen_str(b, d - 1);
        put(b, ".substring(");
        gen_int(b, 0);
        put(b, ")");
        break;
    case 6:
        gen_str(b, d - 1);
        put(b, ".replace(\"a\", \"b\")");
        break;
    case 7:
        gen_list_str(b, d - 1);
        put(b, ".join(\"-\")");
        break;
    case 8:
        put(b, "string(");
        gen_int(b, d - 1);
        put(b, ")");
        break;
    default:
        gen_str(b, d - 1);
        put(b, ".trim()");
        break;
    }
}

static void gen_bool(buf *b, int d);

/* A value of any type: heterogeneous equality, ordering and conversions. */
static void gen_any(buf *b, int d)
{
    static const char *const lits[] = {"1.5",        "3u",         "0u",          "null",
                                       "b\"ab\"",    "2.0",        "-0.0",        "1e300*1e10",
                                       "{\"a\": 1}", "[1, \"a\"]", "dyn(1)",      "dyn(1u)",
                                       "1",          "1e6",        "123456789.5", "0.00001"};
    switch (rnd(9)) {
    case 0:
        gen_int(b, d);
        break;
    case 1:
        gen_str(b, d);
        break;
    case 2:
        gen_bool(b, d);
        break;
    case 3:
        gen_quantity(b, d);
        break;
    case 4:
        gen_semver(b, d);
        break;
    case 5:
        gen_list_int(b, d);
        break;
    case 6:
        attr_ref(b, rnd(2) ? "model" : rnd(2) ? "index" : "version");
        break;
    default:
        put(b, "%s", PICK(lits));
        break;
    }
}

static void gen_bool(buf *b, int d)
{
    switch (d <= 0 ? rnd(3) : rnd(36)) {
    case 22:
        put(b, "(");
        gen_any(b, d - 1);
        put(b, " %s ", rnd(2) ? "==" : "!=");
        gen_any(b, d - 1);
        put(b, ")");
        return;
    case 23:
        gen_any(b, d - 1);
        put(b, " %s ", PICK(cmp_ops));
        gen_any(b, d - 1);
        return;
    case 24:
        gen_any(b, d - 1);
        put(b, " in [");
        gen_any(b, d - 1);
        put(b, ", ");
        gen_any(b, d - 1);
        put(b, "]");
        return;
    case 25:
        put(b, "{\"a\": 1, \"b\": 2}[?");
        gen_str(b, d - 1);
        put(b, "].orValue(0) > ");
        gen_int(b, 0);
        return;
    case 26:
        put(b, "device.attributes[\"%s\"].?%s.orValue(\"x\") == ", PICK(domains),
            rnd(2) ? "model" : "nothing");
        gen_str(b, d - 1);
        return;
    case 27:
        put(b, "type(");
        gen_any(b, d - 1);
        put(b, ") == %s", rnd(3) == 0 ? "int" : rnd(2) ? "string" : "list");
        return;
    case 28:
        put(b, "(");
        gen_int(b, d - 1);
        put(b, " / 0 == 1) %s ", rnd(2) ? "||" : "&&");
        gen_bool(b, d - 1);
        return;
    case 29:
        gen_bool(b, d - 1);
        put(b, " %s (", rnd(2) ? "||" : "&&");
        gen_list_int(b, d - 1);
        put(b, "[100] == 1)");
        return;
    case 30:
        put(b, "%s(", rnd(3) == 0 ? "int" : rnd(2) ? "uint" : "double");
        gen_any(b, d - 1);
        put(b, ") > ");
        gen_int(b, 0);
        return;
    case 31:
        put(b, "string(");
        gen_any(b, d - 1);
        put(b, ") == ");
        gen_str(b, d - 1);
        return;
    case 32:
        put(b, "bytes(");
        gen_str(b, d - 1);
        put(b, ").size() > ");
        gen_int(b, 0);
        return;
    case 33:
        put(b, "optional.of(");
        gen_any(b, d - 1);
        put(b, ").hasValue() && optional.none().orValue(true)");
        return;
    case 34:
        gen_list_str(b, d - 1);
        put(b, "%s", rnd(2) ? ".exists(s, s.startsWith(\"a\"))" : ".all(s, s.size() < 5)");
        return;
    case 35:
        put(b, "cel.bind(x, ");
        gen_any(b, d - 1);
        put(b, ", x == x)");
        return;
    default:
        break;
    }
    switch (d <= 0 ? rnd(3) : rnd(22)) {
    case 0:
        put(b, "%s", rnd(2) ? "true" : "false");
        break;
    case 1:
        attr_ref(b, "healthy");
        break;
    case 2:
        put(b, "\"%s\" in device.attributes", PICK(domains));
        break;
    case 3:
        gen_int(b, d - 1);
        put(b, " %s ", PICK(cmp_ops));
        gen_int(b, d - 1);
        break;
    case 4:
        gen_str(b, d - 1);
        put(b, " %s ", rnd(2) ? "==" : "<");
        gen_str(b, d - 1);
        break;
    case 5:
        gen_str(b, d - 1);
        put(b, "%s", rnd(3) == 0 ? ".startsWith(" : rnd(2) ? ".endsWith(" : ".contains(");
        gen_str(b, d - 1);
        put(b, ")");
        break;
    case 6:
        gen_str(b, d - 1);
        put(b, ".matches(%s)", PICK(regexes));
        break;
    case 7:
        gen_quantity(b, d - 1);
        put(b, "%s", rnd(2) ? ".isGreaterThan(" : ".isLessThan(");
        gen_quantity(b, d - 1);
        put(b, ")");
        break;
    case 8:
        gen_semver(b, d - 1);
        put(b, "%s", rnd(2) ? ".isGreaterThan(" : ".isLessThan(");
        gen_semver(b, d - 1);
        put(b, ")");
        break;
    case 9:
        put(b, "!");
        gen_bool(b, d - 1);
        break;
    case 10:
    case 11:
        put(b, "(");
        gen_bool(b, d - 1);
        put(b, " %s ", rnd(2) ? "&&" : "||");
        gen_bool(b, d - 1);
        put(b, ")");
        break;
    case 12:
        put(b, "(");
        gen_bool(b, d - 1);
        put(b, " ? ");
        gen_bool(b, d - 1);
        put(b, " : ");
        gen_bool(b, d - 1);
        put(b, ")");
        break;
    case 13:
        put(b, "has(device.attributes[\"%s\"].%s)", PICK(domains), rnd(2) ? "model" : "nothing");
        break;
    case 14:
        gen_list_int(b, d - 1);
        put(b, "%s",
            rnd(3) == 0 ? ".exists(x, x > "
            : rnd(2)    ? ".all(x, x != "
                        : ".exists_one(x, x == ");
        gen_int(b, 0);
        put(b, ")");
        break;
    case 15:
        gen_int(b, d - 1);
        put(b, " in ");
        gen_list_int(b, d - 1);
        break;
    case 16:
        gen_str(b, d - 1);
        put(b, " in ");
        gen_list_str(b, d - 1);
        break;
    case 17:
        put(b, "%s(%s)", rnd(2) ? "isQuantity" : "isSemver", PICK(quantity_lits));
        break;
    case 18:
        put(b, "sets.%s(", rnd(2) ? "contains" : "intersects");
        gen_list_int(b, d - 1);
        put(b, ", ");
        gen_list_int(b, d - 1);
        put(b, ")");
        break;
    case 19:
        put(b, "cel.bind(dra, device.attributes[\"%s\"], ", PICK(domains));
        put(b, "has(dra.model) && dra.model.startsWith(\"a\"))");
        break;
    case 20:
        gen_quantity(b, d - 1);
        put(b, " == ");
        gen_quantity(b, d - 1);
        break;
    default:
        gen_list_str(b, d - 1);
        put(b, ".includes(");
        gen_str(b, 0);
        put(b, ")");
        break;
    }
}

/* ---- devices ----------------------------------------------------------------------------------
 */

typedef struct device {
    ks_cel_dra_entry attrs[8], caps[2];
    size_t na, nc;
    const char *driver;
    bool multi;
    cJSON *json;
} device;

static const char *adup(ks_mempool *a, const char *s)
{
    size_t n = strlen(s);
    char *p = ks__mempool_alloc(a, n + 1);
    memcpy(p, s, n + 1);
    return p;
}

static void gen_device(ks_mempool *a, device *dv)
{
    static const char *const drivers[] = {"dra.example.com", "gpu.example.com", ""};
    static const char *const models[] = {"a100", "h100", "A100-80GB", "", "gpu"};
    static const char *const versions[] = {"1.0.0", "1.2.3", "2.0.0-rc.1", "0.0.1"};
    static const char *const qs[] = {"80Gi", "40Gi", "1.5",  "100m", "1e3",  "0",
                                     "2Ki",  "1k",   "1024", "-1",   "-2.5k"};
    memset(dv, 0, sizeof *dv);
    dv->driver = drivers[rnd(3) ? 0 : 1 + rnd(2)];
    dv->multi = rnd(2);
    dv->json = cJSON_CreateObject();
    cJSON_AddStringToObject(dv->json, "driver", dv->driver);
    cJSON_AddBoolToObject(dv->json, "allowMultipleAllocations", dv->multi);
    cJSON *attrs = cJSON_AddObjectToObject(dv->json, "attributes");
    cJSON *caps = cJSON_AddObjectToObject(dv->json, "capacity");
    const char *prefix = rnd(4) == 0 ? "other.example.com/" : "";
    char name[64];
#define ATTR(nm) snprintf(name, sizeof name, "%s%s", prefix, nm)
    if (rnd(4)) {
        const char *m = PICK(models);
        ATTR("model");
        dv->attrs[dv->na++] = (ks_cel_dra_entry){adup(a, name), ks_cel_string(a, m)};
        cJSON_AddItemToObject(attrs, name, cJSON_CreateObject());
        cJSON_AddStringToObject(cJSON_GetObjectItem(attrs, name), "string", m);
    }
    if (rnd(4)) {
        int64_t i = (int64_t)rnd(5) - 1;
        ATTR("index");
        dv->attrs[dv->na++] = (ks_cel_dra_entry){adup(a, name), ks_cel_int(i)};
        cJSON_AddItemToObject(attrs, name, cJSON_CreateObject());
        cJSON_AddNumberToObject(cJSON_GetObjectItem(attrs, name), "int", (double)i);
    }
    if (rnd(3)) {
        bool h = rnd(2);
        ATTR("healthy");
        dv->attrs[dv->na++] = (ks_cel_dra_entry){adup(a, name), ks_cel_bool(h)};
        cJSON_AddItemToObject(attrs, name, cJSON_CreateObject());
        cJSON_AddBoolToObject(cJSON_GetObjectItem(attrs, name), "bool", h);
    }
    if (rnd(3)) {
        const char *v = PICK(versions);
        ks_cel_value sv;
        ks_cel_semver_parse(a, v, strlen(v), &sv);
        ATTR("version");
        dv->attrs[dv->na++] = (ks_cel_dra_entry){adup(a, name), sv};
        cJSON_AddItemToObject(attrs, name, cJSON_CreateObject());
        cJSON_AddStringToObject(cJSON_GetObjectItem(attrs, name), "version", v);
    }
    if (rnd(3)) {
        size_t n = 1 + rnd(3);
        ks_cel_value *items = ks__mempool_alloc(a, sizeof(ks_cel_value) * n);
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) {
            int64_t x = rnd(4);
            items[i] = ks_cel_int(x);
            cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)x));
        }
        ks_cel_list *l = ks__mempool_alloc(a, sizeof *l);
        l->n = n;
        l->items = items;
        ATTR("ids");
        dv->attrs[dv->na++] = (ks_cel_dra_entry){adup(a, name), {.kind = KS_CEL_LIST, .list = l}};
        cJSON_AddItemToObject(attrs, name, cJSON_CreateObject());
        cJSON_AddItemToObject(cJSON_GetObjectItem(attrs, name), "ints", arr);
    }
    if (rnd(3)) {
        size_t n = 1 + rnd(2);
        ks_cel_value *items = ks__mempool_alloc(a, sizeof(ks_cel_value) * n);
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++) {
            const char *m = PICK(models);
            items[i] = ks_cel_string(a, m);
            cJSON_AddItemToArray(arr, cJSON_CreateString(m));
        }
        ks_cel_list *l = ks__mempool_alloc(a, sizeof *l);
        l->n = n;
        l->items = items;
        ATTR("tags");
        dv->attrs[dv->na++] = (ks_cel_dra_entry){adup(a, name), {.kind = KS_CEL_LIST, .list = l}};
        cJSON_AddItemToObject(attrs, name, cJSON_CreateObject());
        cJSON_AddItemToObject(cJSON_GetObjectItem(attrs, name), "strings", arr);
    }
    static const char *const capnames[] = {"memory", "cores"};
    for (int k = 0; k < 2; k++) {
        if (!rnd(3))
            continue;
        const char *q = PICK(qs);
        ks_cel_value qv;
        ks_cel_quantity_parse(a, q, strlen(q), &qv);
        snprintf(name, sizeof name, "%s%s", prefix, capnames[k]);
        dv->caps[dv->nc++] = (ks_cel_dra_entry){adup(a, name), qv};
        cJSON_AddStringToObject(caps, name, q);
    }
}

/* ---- the oracle ----------------------------------------------------------------------------- */

static FILE *to_oracle, *from_oracle;
static pid_t oracle_pid;

static void start_oracle(const char *path)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        exit(2);
    oracle_pid = fork();
    if (oracle_pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(path, path, (char *)NULL);
        perror(path);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_oracle = fdopen(in[1], "w");
    from_oracle = fdopen(out[0], "r");
}

/* A device from the oracle's request format (for --stdin). */
static ks_cel_value json_device(ks_mempool *a, const cJSON *req)
{
    ks_cel_dra_entry attrs[32], caps[32];
    size_t na = 0, nc = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(req, "attributes"))
    {
        if (na == 32)
            break;
        const cJSON *v = it->child;
        ks_cel_value val = {0};
        if (!v)
            continue;
        if (!strcmp(v->string, "int"))
            val = ks_cel_int((int64_t)v->valuedouble);
        else if (!strcmp(v->string, "bool"))
            val = ks_cel_bool(cJSON_IsTrue(v));
        else if (!strcmp(v->string, "string"))
            val = ks_cel_string(a, v->valuestring);
        else if (!strcmp(v->string, "version"))
            ks_cel_semver_parse(a, v->valuestring, strlen(v->valuestring), &val);
        else {
            size_t n = (size_t)cJSON_GetArraySize(v), k = 0;
            ks_cel_value *items = ks__mempool_alloc(a, sizeof(ks_cel_value) * (n ? n : 1));
            const cJSON *e;
            cJSON_ArrayForEach(e, v)
            {
                if (!strcmp(v->string, "ints"))
                    items[k++] = ks_cel_int((int64_t)e->valuedouble);
                else if (!strcmp(v->string, "bools"))
                    items[k++] = ks_cel_bool(cJSON_IsTrue(e));
                else if (!strcmp(v->string, "strings"))
                    items[k++] = ks_cel_string(a, e->valuestring);
                else
                    ks_cel_semver_parse(a, e->valuestring, strlen(e->valuestring), &items[k++]);
            }
            ks_cel_list *l = ks__mempool_alloc(a, sizeof *l);
            l->n = k;
            l->items = items;
            val.kind = KS_CEL_LIST;
            val.list = l;
        }
        attrs[na++] = (ks_cel_dra_entry){adup(a, it->string), val};
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(req, "capacity"))
    {
        if (nc == 32)
            break;
        ks_cel_value q;
        if (ks_cel_quantity_parse(a, it->valuestring, strlen(it->valuestring), &q))
            caps[nc++] = (ks_cel_dra_entry){adup(a, it->string), q};
    }
    const cJSON *drv = cJSON_GetObjectItem(req, "driver");
    return ks_cel_dra_device(a, drv ? drv->valuestring : "", attrs, na, caps, nc,
                             cJSON_IsTrue(cJSON_GetObjectItem(req, "allowMultipleAllocations")));
}

/* --stdin: evaluates requests in the oracle's format and answers in its format (debugging). */
static int serve_stdin(void)
{
    char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        cJSON *req = cJSON_Parse(line);
        if (!req)
            continue;
        ks_mempool arena = {0};
        ks_cel_error err;
        ks_cel_program *p =
            ks_cel_compile(cJSON_GetObjectItem(req, "expr")->valuestring, &ks_cel_dra_env, &err);
        cJSON *rep = cJSON_CreateObject();
        if (!p) {
            cJSON_AddStringToObject(rep, "compileError", err.msg);
        } else {
            ks_cel_value dev = json_device(&arena, req);
            bool match;
            uint64_t cost = 0;
            if (ks_cel_dra_matches(p, &dev, &arena, &match, &cost, &err) != 0)
                cJSON_AddStringToObject(rep, "error", err.msg);
            else
                cJSON_AddBoolToObject(rep, "match", match);
            cJSON_AddNumberToObject(rep, "cost", (double)cost);
        }
        char *out = cJSON_PrintUnformatted(rep);
        printf("%s\n", out);
        free(out);
        cJSON_Delete(rep);
        cJSON_Delete(req);
        ks_cel_program_free(p);
        ks__mempool_free(&arena);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--stdin") == 0)
        return serve_stdin();
    if (argc != 4) {
        fprintf(stderr, "usage: %s ORACLE CASES SEED\n", argv[0]);
        return 2;
    }
    long cases = atol(argv[2]);
    rng = strtoull(argv[3], NULL, 10) * 0x9E3779B97F4A7C15ULL + 1;
    signal(SIGPIPE, SIG_IGN);
    start_oracle(argv[1]);
    long agree = 0, differ = 0, checker = 0, cost_differ = 0, errors = 0, matches = 0;
    size_t linecap = 1 << 16;
    char *line = malloc(linecap);
    for (long i = 0; i < cases; i++) {
        ks_mempool arena = {0};
        buf e = {0};
        device dv;
        if (rnd(5) == 0) {
            /* a value check: our string(E) (or E through format()) for a random E, asked back
             * as string(E) == "ours" */
            buf v = {0};
            gen_any(&v, 1 + (int)rnd(3));
            gen_device(&arena, &dv);
            char *conv = malloc(2 * v.n + 64);
            switch (rnd(4)) { /* string(E), or E through string.format */
            case 0:
                sprintf(conv, "\"%%s\".format([%s])", v.p);
                break;
            case 1:
                sprintf(conv, "\"%%.3f|%%e|%%d\".format([%s, %s, 7])", v.p, v.p);
                break;
            case 2:
                sprintf(conv, "\"%%x %%o %%b\".format([%s, 9, %s])", v.p, v.p);
                break;
            default:
                sprintf(conv, "string(%s)", v.p);
                break;
            }
            ks_cel_error ve;
            ks_cel_program *vp = ks_cel_compile(conv, &ks_cel_dra_env, &ve);
            ks_cel_value sv;
            ks_cel_binding vb = {"device", ks_cel_dra_device(&arena, dv.driver, dv.attrs, dv.na,
                                                             dv.caps, dv.nc, dv.multi)};
            if (vp && ks_cel_eval(vp, &vb, 1, &arena, &sv, NULL, &ve) == 0 &&
                sv.kind == KS_CEL_STRING) {
                put(&e, "%s == \"", conv);
                for (size_t k = 0; k < sv.s.len; k++) {
                    unsigned char ch = (unsigned char)sv.s.ptr[k];
                    if (ch == '"' || ch == '\\')
                        put(&e, "\\%c", ch);
                    else if (ch < 0x20 || ch == 0x7f)
                        put(&e, "\\x%02x", ch);
                    else
                        put(&e, "%c", ch);
                }
                put(&e, "\"");
            } else {
                put(&e, "%s == \"\"", conv);
            }
            ks_cel_program_free(vp);
            free(conv);
            free(v.p);
        } else {
            gen_bool(&e, 1 + (int)rnd(4));
            gen_device(&arena, &dv);
        }
        cJSON_AddStringToObject(dv.json, "expr", e.p);
        char *req = cJSON_PrintUnformatted(dv.json);
        fprintf(to_oracle, "%s\n", req);
        fflush(to_oracle);
        if (!fgets(line, (int)linecap, from_oracle)) {
            fprintf(stderr, "oracle died at case %ld: %s\n", i, req);
            return 2;
        }
        cJSON *rep = cJSON_Parse(line);
        cJSON *cerr = cJSON_GetObjectItem(rep, "compileError"),
              *m = cJSON_GetObjectItem(rep, "match"), *err = cJSON_GetObjectItem(rep, "error"),
              *cost = cJSON_GetObjectItem(rep, "cost");
        ks_cel_error ce;
        ks_cel_program *p = ks_cel_compile(e.p, &ks_cel_dra_env, &ce);
        char ours[600], theirs[600];
        bool same;
        uint64_t our_cost = 0;
        if (!p) {
            snprintf(ours, sizeof ours, "compile error: %s", ce.msg);
        } else {
            ks_cel_value dev =
                ks_cel_dra_device(&arena, dv.driver, dv.attrs, dv.na, dv.caps, dv.nc, dv.multi);
            bool match;
            if (ks_cel_dra_matches(p, &dev, &arena, &match, &our_cost, &ce) != 0)
                snprintf(ours, sizeof ours, "error: %s", ce.msg);
            else
                snprintf(ours, sizeof ours, "match: %s", match ? "true" : "false");
        }
        if (cerr) {
            snprintf(theirs, sizeof theirs, "compile error: %s", cerr->valuestring);
            /* type errors need a checker: we report them at match time (or evaluate) */
            bool syntax = strstr(cerr->valuestring, "Syntax error") != NULL;
            same = syntax ? !p : true;
            if (p)
                checker++;
        } else if (err) {
            snprintf(theirs, sizeof theirs, "error: %s", err->valuestring);
            same = p && strcmp(ours, theirs) == 0;
            errors++;
        } else {
            snprintf(theirs, sizeof theirs, "match: %s", cJSON_IsTrue(m) ? "true" : "false");
            same = p && strcmp(ours, theirs) == 0;
            matches++;
        }
        if (!cerr && p && cost && (uint64_t)cost->valuedouble != our_cost) {
            cost_differ++;
            if (cost_differ <= 400)
                printf("COST ours %" PRIu64 ", upstream %.0f: %s\n", our_cost, cost->valuedouble,
                       e.p);
        }
        if (same) {
            agree++;
        } else {
            differ++;
            if (differ <= 30)
                printf("DIFF %s\n  device %s\n  ours:     %s\n  upstream: %s\n", e.p, req, ours,
                       theirs);
        }
        ks_cel_program_free(p);
        cJSON_Delete(rep);
        cJSON_Delete(dv.json);
        free(req);
        free(e.p);
        ks__mempool_free(&arena);
    }
    fclose(to_oracle);
    fclose(from_oracle);
    free(line);
    waitpid(oracle_pid, NULL, 0);
    printf("cel difffuzz: %ld cases (seed %s): %ld agree, %ld differ; upstream: %ld matches, %ld "
           "errors, %ld "
           "type errors at compile (ours at match time); %ld cost differences\n",
           cases, argv[3], agree, differ, matches, errors, checker, cost_differ);
    /* costs are reported, not (yet) required to agree: see docs/CEL.md "Cost" */
    return differ ? 1 : 0;
}
