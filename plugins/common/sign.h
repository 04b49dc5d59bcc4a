/*
 * Pod signature fragments shared by the in-tree plugins' sign slots (upstream
 * kube-scheduler/framework/signers.go): the fragment keys and the signers that several plugins
 * use (tolerations, resources), and a small JSON writer, since plugins see the pod only through
 * the SDK's accessors.
 *
 * Values are canonical JSON for what the plugin's Filter and Score read, with every list whose
 * order does not matter sorted, as upstream's signers do. The bytes need not equal upstream's
 * (signatures are compared only inside one scheduler); two pods must get equal bytes exactly when
 * upstream's signers would give them equal values.
 *
 * Threads: any (sign slots are pure); every buffer belongs to one call.
 */
#ifndef KS_PLUGINS_COMMON_SIGN_H
#define KS_PLUGINS_COMMON_SIGN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubesched/plugin.h"

/* upstream fwk.*SignerName */
#define KS_SIGN_IMAGE_NAMES "v1.Pod.Spec.CanonicalImageNames()"
#define KS_SIGN_REQUIRED_FEATURES "v1.Pod.Spec.RequiredFeatures()"
#define KS_SIGN_LABELS "v1.Pod.Labels"
#define KS_SIGN_NODE_NAME "v1.Pod.Spec.NodeName"
#define KS_SIGN_NODE_AFFINITY "v1.Pod.Spec.Affinity.NodeAffinity"
#define KS_SIGN_NODE_SELECTOR "v1.Pod.Spec.Affinity.NodeSelector"
#define KS_SIGN_HOST_PORTS "v1.Pod.Spec.HostPorts()"
#define KS_SIGN_RESOURCES "v1.Pod.Spec.ContainerRequestsAndOverheads()"
#define KS_SIGN_TOLERATIONS "v1.Pod.Spec.Tolerations"
#define KS_SIGN_VOLUMES "v1.Pod.Spec.Volumes.NonSyntheticSources()"

/* A symbol's text, "" for KS_SYM_ABSENT. */
static inline const char *ks_sign_sym(ks_sym s)
{
    const char *t = ks_sym_str(s);
    return t ? t : "";
}

/* A growing NUL-terminated buffer (malloc'd; oom set on a failed allocation, then ignored). */
typedef struct ks_jbuf {
    char *p;
    size_t n, cap;
    int oom;
} ks_jbuf;

static inline void ks_jb_raw(ks_jbuf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *p = (char *)realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static inline void ks_jb_put(ks_jbuf *b, const char *s) { ks_jb_raw(b, s, strlen(s)); }

static inline void ks_jb_i64(ks_jbuf *b, int64_t v)
{
    char t[24];
    int n = snprintf(t, sizeof(t), "%lld", (long long)v);
    ks_jb_raw(b, t, (size_t)n);
}

/* s as a JSON string. */
static inline void ks_jb_str(ks_jbuf *b, const char *s)
{
    ks_jb_raw(b, "\"", 1);
    for (const char *run = s;; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch != '\0' && ch != '"' && ch != '\\' && ch >= 0x20)
            continue;
        ks_jb_raw(b, run, (size_t)(s - run));
        if (ch == '\0')
            break;
        char esc[8];
        if (ch == '"' || ch == '\\')
            snprintf(esc, sizeof(esc), "\\%c", ch);
        else
            snprintf(esc, sizeof(esc), "\\u%04x", ch);
        ks_jb_put(b, esc);
        run = s + 1;
    }
    ks_jb_raw(b, "\"", 1);
}

static inline void ks_jb_free(ks_jbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* Adds the buffer as fragment key; an allocation failure refuses the pod (KS_ERROR). */
static inline ks_code ks_jb_sign(ks_jbuf *b, ks_signature *sig, const char *key, ks_status *st)
{
    ks_code code = KS_SUCCESS;
    if (b->oom || !b->p) {
        ks_status_reason(st, "out of memory signing the pod");
        code = KS_ERROR;
    } else {
        ks_sign_add(sig, key, b->p);
    }
    ks_jb_free(b);
    return code;
}

static inline int ks_sign_strcmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static inline int ks_sign_label_cmp(const void *a, const void *b)
{
    const ks_label *x = (const ks_label *)a, *y = (const ks_label *)b;
    return strcmp(ks_sign_sym(x->key), ks_sign_sym(y->key));
}

/* A label map as encoding/json writes a map[string]string: keys sorted; null when empty (a nil
 * map; kubesched does not tell an empty map from an absent one, and neither do the plugins). */
static inline void ks_jb_labels(ks_jbuf *b, const ks_label *labels, size_t n)
{
    if (n == 0) {
        ks_jb_put(b, "null");
        return;
    }
    ks_label *sorted = (ks_label *)malloc(n * sizeof(*sorted));
    if (!sorted) {
        b->oom = 1;
        return;
    }
    memcpy(sorted, labels, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), ks_sign_label_cmp);
    ks_jb_put(b, "{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            ks_jb_put(b, ",");
        ks_jb_str(b, ks_sign_sym(sorted[i].key));
        ks_jb_put(b, ":");
        ks_jb_str(b, ks_sign_sym(sorted[i].value));
    }
    ks_jb_put(b, "}");
    free(sorted);
}

/* upstream TolerationsSigner: the tolerations sorted by key, then value (a stable sort here, so
 * equal lists give equal bytes). */
static inline int ks_sign_tol_before(const ks_toleration *a, const ks_toleration *b)
{
    int c = strcmp(ks_sign_sym(a->key), ks_sign_sym(b->key));
    return c < 0 || (c == 0 && strcmp(ks_sign_sym(a->value), ks_sign_sym(b->value)) < 0);
}

static inline ks_code ks_sign_tolerations(const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    const ks_toleration *tols;
    size_t n = ks_pod_tolerations(pod, &tols);
    const ks_toleration **order = (const ks_toleration **)malloc((n ? n : 1) * sizeof(*order));
    ks_jbuf b = {0};
    if (!order)
        b.oom = 1;
    for (size_t i = 0; order && i < n; i++) { /* insertion sort: stable */
        size_t j = i;
        while (j > 0 && ks_sign_tol_before(&tols[i], order[j - 1])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = &tols[i];
    }
    static const char *const effects[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
    ks_jb_put(&b, "[");
    for (size_t i = 0; order && i < n; i++) {
        const ks_toleration *t = order[i];
        ks_jb_put(&b, i ? ",{\"key\":" : "{\"key\":");
        ks_jb_str(&b, ks_sign_sym(t->key));
        ks_jb_put(&b,
                  t->op == KS_TOL_EXISTS ? ",\"operator\":\"Exists\"" : ",\"operator\":\"Equal\"");
        ks_jb_put(&b, ",\"value\":");
        ks_jb_str(&b, ks_sign_sym(t->value));
        ks_jb_put(&b, ",\"effect\":");
        ks_jb_str(&b, (unsigned)t->effect < 4 ? effects[t->effect] : "");
        if (t->has_seconds) {
            ks_jb_put(&b, ",\"tolerationSeconds\":");
            ks_jb_i64(&b, t->toleration_seconds);
        }
        ks_jb_put(&b, "}");
    }
    ks_jb_put(&b, "]");
    free(order);
    return ks_jb_sign(&b, sig, KS_SIGN_TOLERATIONS, st);
}

static inline void ks_jb_resources(ks_jbuf *b, const ks_resources *r)
{
    ks_jb_put(b, "{\"MilliCPU\":");
    ks_jb_i64(b, r->milli_cpu);
    ks_jb_put(b, ",\"Memory\":");
    ks_jb_i64(b, r->memory);
    ks_jb_put(b, ",\"EphemeralStorage\":");
    ks_jb_i64(b, r->ephemeral_storage);
    ks_jb_put(b, ",\"AllowedPodNumber\":0,\"ScalarResources\":");
    if (r->nscalar == 0) {
        ks_jb_put(b, "null}");
        return;
    }
    /* map[v1.ResourceName]int64: keys sorted as text (scalar[] is sorted by symbol id). */
    ks_label *byname = (ks_label *)malloc(r->nscalar * sizeof(*byname));
    if (!byname) {
        b->oom = 1;
        return;
    }
    for (uint32_t i = 0; i < r->nscalar; i++)
        byname[i] = (ks_label){r->scalar[i].name, (ks_sym)i};
    qsort(byname, r->nscalar, sizeof(*byname), ks_sign_label_cmp);
    ks_jb_put(b, "{");
    for (uint32_t i = 0; i < r->nscalar; i++) {
        if (i)
            ks_jb_put(b, ",");
        ks_jb_str(b, ks_sign_sym(byname[i].key));
        ks_jb_put(b, ":");
        ks_jb_i64(b, r->scalar[byname[i].value].value);
    }
    ks_jb_put(b, "}}");
    free(byname);
}

/* upstream Fit/BalancedAllocation SignPod: computePodResourceRequest (PodRequests). kubesched
 * adds the non-zero requests that scoring reads (containers without cpu/memory requests count
 * 100m/200Mi): upstream's fragment leaves them out, so two pods with equal totals split
 * differently over containers would share a signature and still score differently. */
static inline ks_code ks_sign_resources(const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    ks_jbuf b = {0};
    ks_jb_put(&b, "{\"Requests\":");
    ks_jb_resources(&b, ks_pod_requests(pod));
    const ks_resources *nz = ks_pod_nonzero_requests(pod);
    ks_jb_put(&b, ",\"NonZero\":{\"MilliCPU\":");
    ks_jb_i64(&b, nz->milli_cpu);
    ks_jb_put(&b, ",\"Memory\":");
    ks_jb_i64(&b, nz->memory);
    ks_jb_put(&b, "}}");
    return ks_jb_sign(&b, sig, KS_SIGN_RESOURCES, st);
}

/* upstream VolumesSigner (ABI 1.5 host): the JSON of every volume source but configMap and secret
 * ones (ks_pod_volume.source_json), sorted, as a JSON list of strings. VolumeZone and
 * VolumeRestrictions sign with it. */
static inline ks_code ks_sign_volumes(const ks_pod *pod, ks_signature *sig, ks_status *st)
{
    const ks_pod_volume *vols;
    size_t n = ks_pod_volumes(pod, &vols), k = 0;
    if (n == 0) { /* the common pod: nothing to sort or allocate */
        ks_sign_add(sig, KS_SIGN_VOLUMES, "[]");
        return KS_SUCCESS;
    }
    const char **srcs = (const char **)malloc((n ? n : 1) * sizeof(*srcs));
    ks_jbuf b = {0};
    if (!srcs)
        b.oom = 1;
    for (size_t i = 0; srcs && i < n; i++)
        if (vols[i].source_json)
            srcs[k++] = vols[i].source_json;
    if (srcs)
        qsort(srcs, k, sizeof(*srcs), ks_sign_strcmp);
    ks_jb_put(&b, "[");
    for (size_t i = 0; srcs && i < k; i++) {
        if (i)
            ks_jb_put(&b, ",");
        ks_jb_str(&b, srcs[i]);
    }
    ks_jb_put(&b, "]");
    free(srcs);
    return ks_jb_sign(&b, sig, KS_SIGN_VOLUMES, st);
}

#endif
