/*
 * DynamicResources' private parts shared with its tests: the extended resources of a pod and the
 * device requests and mappings of the special claim (extended.c, upstream
 * extendeddynamicresources.go createRequestsAndMappings).
 */
#ifndef KS_PLUGIN_DYNAMICRESOURCES_INT_H
#define KS_PLUGIN_DYNAMICRESOURCES_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kubesched/plugin.h"

/* One extended resource the pod requests (podScalarResources restricted to
 * IsDRAExtendedResourceName, > 0), with the class it maps to (KS_SYM_ABSENT: none). */
typedef struct dra_ext_res {
    ks_sym name;
    ks_sym cls;
    int64_t quantity;
} dra_ext_res;

/* A node's variant of the special claim: the requests and mappings for the set of extended
 * resources (bit i: ext[i]) that the node's allocatable lacks. Made once per set and cycle. */
typedef struct dra_ext_variant {
    uint64_t mask;
    const ks_resource_claim *claim; /* referenced; not in the store */
    size_t nmaps;
    ks_extended_request_mapping *maps;
    char **strs; /* the strings of the requests and mappings */
    size_t nstrs;
    struct dra_ext_variant *next;
} dra_ext_variant;

/* createRequestsAndMappings for the resources of mask (bit i: ext[i]), in resource name order:
 * per resource, the long-lived containers' requests (regular containers, sidecars), then the
 * short-lived init containers', which first reuse the long-lived requests of later containers and
 * then share the largest of their own. v gets the mappings (and owns every string); *reqs (free
 * with ks_free) the requests sorted by name. KS_SUCCESS, or KS_ERROR when out of memory. */
ks_code dra_create_requests(const ks_pod *pod, const dra_ext_res *ext, size_t next, uint64_t mask,
                            dra_ext_variant *v, ks_dra_extended_request **reqs, size_t *nreqs);
/* Frees v and what it owns (NULL: no-op). */
void dra_ext_variant_free(dra_ext_variant *v);

#endif
