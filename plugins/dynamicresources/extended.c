/*
 * DynamicResources: the device requests of the special claim for a pod's extended resources and
 * their mappings to containers (upstream v1.37.2 extendeddynamicresources.go:
 * createRequestsAndMappings, createResourceRequestAndMappings, partitionContainerIndices). Each
 * container that requests a resource gets a request named container-<i>-request-<j> (i: its index
 * among init containers then containers, j: the resource's index among its sorted requests);
 * init containers that do not keep running reuse the devices of the containers after them and
 * share the largest of their own.
 *
 * Threads: whichever thread calls (Filter workers, under the state's mutex).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamicresources_int.h"

static const char *symstr(ks_sym s)
{
    const char *v = ks_sym_str(s);
    return v ? v : "";
}

/* A container's request for one resource, or NULL. */
static const ks_container_request *container_request(const ks_pod_container *c, ks_sym r)
{
    for (uint32_t i = 0; i < c->nrequests; i++)
        if (c->requests[i].name == r)
            return &c->requests[i];
    return NULL;
}

/* What createRequestsAndMappings builds: requests and mappings, their strings owned by v. */
typedef struct req_build {
    ks_dra_extended_request *reqs;
    size_t nreqs, cap_reqs;
    dra_ext_variant *v;
    size_t cap_maps, cap_strs;
    int oom;
} req_build;

static char *keep_str(req_build *b, const char *text)
{
    if (b->oom)
        return NULL;
    if (b->v->nstrs == b->cap_strs) {
        size_t cap = b->cap_strs ? 2 * b->cap_strs : 16;
        char **n = ks_alloc(cap * sizeof(*n));
        if (!n) {
            b->oom = 1;
            return NULL;
        }
        if (b->v->nstrs)
            memcpy(n, b->v->strs, b->v->nstrs * sizeof(*n));
        ks_free(b->v->strs);
        b->v->strs = n;
        b->cap_strs = cap;
    }
    size_t len = strlen(text) + 1;
    char *c = ks_alloc(len);
    if (!c) {
        b->oom = 1;
        return NULL;
    }
    memcpy(c, text, len);
    b->v->strs[b->v->nstrs++] = c;
    return c;
}

/* A mapping (container, resource, request); appended to list (of n, capacity cap). */
typedef struct map_list {
    ks_extended_request_mapping *m;
    size_t n, cap;
} map_list;

static void map_add(req_build *b, map_list *l, const char *container, const char *resource,
                    const char *request)
{
    if (b->oom)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        ks_extended_request_mapping *n = ks_alloc(cap * sizeof(*n));
        if (!n) {
            b->oom = 1;
            return;
        }
        if (l->n)
            memcpy(n, l->m, l->n * sizeof(*n));
        ks_free(l->m);
        l->m = n;
        l->cap = cap;
    }
    l->m[l->n++] = (ks_extended_request_mapping){container, resource, request};
}

/* One container's device request for a resource (createResourceRequestAndMappings): reusable
 * are the long-lived containers' requests from this container's index on (count 0: none);
 * *req gets the new request's name and count (count 0: none needed). */
typedef struct one_req {
    const char *name;
    int64_t count;
} one_req;

static one_req container_req(req_build *b, size_t ci, const ks_pod_container *c, ks_sym r,
                             const one_req *reusable, size_t nreusable, map_list *maps)
{
    one_req none = {NULL, 0};
    const ks_container_request *cr = container_request(c, r);
    if (!cr || cr->value == 0)
        return none;
    const char *rname = symstr(r);
    int64_t sum = 0;
    for (size_t k = 0; k < nreusable; k++) {
        if (reusable[k].count == 0)
            continue;
        sum += reusable[k].count;
        map_add(b, maps, c->name, rname, reusable[k].name);
        if (sum >= cr->value)
            return none;
    }
    char name[64];
    snprintf(name, sizeof(name), "container-%zu-request-%d", ci, cr->sorted_index);
    one_req out = {keep_str(b, name), cr->value - sum};
    map_add(b, maps, c->name, rname, out.name);
    return out;
}

static int cmp_req(const void *a, const void *b)
{
    return strcmp(((const ks_dra_extended_request *)a)->name,
                  ((const ks_dra_extended_request *)b)->name);
}

static void req_add(req_build *b, const char *name, const char *cls, int64_t count)
{
    if (b->oom)
        return;
    if (b->nreqs == b->cap_reqs) {
        size_t cap = b->cap_reqs ? 2 * b->cap_reqs : 8;
        ks_dra_extended_request *n = ks_alloc(cap * sizeof(*n));
        if (!n) {
            b->oom = 1;
            return;
        }
        if (b->nreqs)
            memcpy(n, b->reqs, b->nreqs * sizeof(*n));
        ks_free(b->reqs);
        b->reqs = n;
        b->cap_reqs = cap;
    }
    b->reqs[b->nreqs++] = (ks_dra_extended_request){name, cls, count};
}

ks_code dra_create_requests(const ks_pod *pod, const dra_ext_res *ext, size_t next, uint64_t mask,
                            dra_ext_variant *v, ks_dra_extended_request **reqs, size_t *nreqs)
{
    const ks_pod_container *cs;
    size_t nc = ks_pod_containers(pod, &cs);
    req_build b = {NULL, 0, 0, v, 0, 0, 0};
    map_list all = {NULL, 0, 0};
    one_req *longl = ks_alloc((nc ? nc : 1) * sizeof(*longl));
    if (!longl)
        return KS_ERROR;
    for (size_t e = 0; e < next && !b.oom; e++) {
        if (!(mask & ((uint64_t)1 << e)) || ext[e].cls == KS_SYM_ABSENT)
            continue;
        ks_sym r = ext[e].name;
        const char *cls = symstr(ext[e].cls);
        map_list lmaps = {NULL, 0, 0}, smaps = {NULL, 0, 0};
        for (size_t i = 0; i < nc; i++) {
            longl[i] = (one_req){NULL, 0};
            if (!cs[i].init || cs[i].sidecar)
                longl[i] = container_req(&b, i, &cs[i], r, NULL, 0, &lmaps);
        }
        one_req maxs = {NULL, 0};
        size_t nshort_names = 0;
        const char **short_names = ks_alloc((nc ? nc : 1) * sizeof(*short_names));
        if (!short_names)
            b.oom = 1;
        for (size_t i = 0; i < nc && !b.oom; i++) {
            if (!cs[i].init || cs[i].sidecar)
                continue;
            one_req q = container_req(&b, i, &cs[i], r, longl + i, nc - i, &smaps);
            if (q.count > 0) {
                short_names[nshort_names++] = q.name;
                if (!maxs.name || maxs.count < q.count)
                    maxs = q;
            }
        }
        /* Mappings to other short-lived requests name the largest one instead. */
        if (maxs.name && nshort_names > 1)
            for (size_t k = 0; k < smaps.n; k++)
                for (size_t j = 0; j < nshort_names; j++)
                    if (smaps.m[k].request_name == short_names[j] && short_names[j] != maxs.name)
                        smaps.m[k].request_name = maxs.name;
        ks_free(short_names);
        if (maxs.name)
            req_add(&b, maxs.name, cls, maxs.count);
        for (size_t i = 0; i < nc; i++)
            if (longl[i].count > 0)
                req_add(&b, longl[i].name, cls, longl[i].count);
        for (size_t k = 0; k < lmaps.n; k++)
            map_add(&b, &all, lmaps.m[k].container_name, lmaps.m[k].resource_name,
                    lmaps.m[k].request_name);
        for (size_t k = 0; k < smaps.n; k++)
            map_add(&b, &all, smaps.m[k].container_name, smaps.m[k].resource_name,
                    smaps.m[k].request_name);
        ks_free(lmaps.m);
        ks_free(smaps.m);
    }
    ks_free(longl);
    if (b.oom) {
        ks_free(b.reqs);
        ks_free(all.m);
        return KS_ERROR;
    }
    if (b.nreqs > 1)
        qsort(b.reqs, b.nreqs, sizeof(*b.reqs), cmp_req);
    v->maps = all.m;
    v->nmaps = all.n;
    *reqs = b.reqs;
    *nreqs = b.nreqs;
    return KS_SUCCESS;
}

void dra_ext_variant_free(dra_ext_variant *v)
{
    if (!v)
        return;
    ks_resource_claim_release(v->claim);
    for (size_t i = 0; i < v->nstrs; i++)
        ks_free(v->strs[i]);
    ks_free(v->strs);
    ks_free(v->maps);
    ks_free(v);
}
