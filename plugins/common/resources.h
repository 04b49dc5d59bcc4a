/*
 * Resource-name classes shared by the resource plugins (NodeResourcesFit,
 * NodeResourcesBalancedAllocation), as upstream's v1helper and schedutil define them.
 * Header-only, SDK only; pure functions used when args are read, not in Filter/Score.
 */
#ifndef KS_PLUGINS_COMMON_RESOURCES_H
#define KS_PLUGINS_COMMON_RESOURCES_H

#include <string.h>

/* Upstream v1helper.IsExtendedResourceName: has a '/', is not a kubernetes.io/ native resource and
 * not a quota "requests." name. Only extended resources can be ignored by NodeResourcesFit args. */
static inline int ks_h_is_extended_resource(const char *name)
{
    return strchr(name, '/') != NULL && strstr(name, "kubernetes.io/") == NULL &&
           strncmp(name, "requests.", 9) != 0;
}

/* Upstream schedutil.IsScalarResourceName: extended, hugepages-*, kubernetes.io/ prefixed native or
 * attachable-volumes-*. Only these enter framework.Resource's scalar map; a pod request for any
 * other name is neither filtered nor scored. */
static inline int ks_h_is_scalar_resource(const char *name)
{
    return ks_h_is_extended_resource(name) || strncmp(name, "hugepages-", 10) == 0 ||
           strstr(name, "kubernetes.io/") != NULL || strncmp(name, "attachable-volumes-", 19) == 0;
}

#endif
