/*
 * JSON merge patch (RFC 7386, the API server's application/merge-patch+json) on cJSON trees:
 * what `simulate`'s in-memory cluster does with a PreBind plugin's ks_storage_patch, so that the
 * object it files is the one the API server would have stored.
 *
 * Threads: any; no shared state.
 */
#ifndef KS_CORE_MERGE_PATCH_H
#define KS_CORE_MERGE_PATCH_H

#include <cjson/cJSON.h>

/* Applies patch to *target (which it may replace: a patch that is not an object replaces the
 * whole document). *target is owned by the caller before and after; patch is only read.
 * 0, or KS_ENOMEM with *target partly patched (the caller drops it). */
int ks__json_merge_patch(cJSON **target, const cJSON *patch);
/* The same applied to the member `name` of the object doc (created when absent): a status
 * subresource write. 0 or KS_ENOMEM. */
int ks__json_merge_patch_member(cJSON *doc, const char *name, const cJSON *patch);

#endif
