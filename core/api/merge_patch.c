/* RFC 7386 JSON merge patch; see merge_patch.h. */
#include "api/merge_patch.h"

#include "kubesched/plugin.h"

/* The RFC's MergePatch(Target, Patch), recursively: an object patch merges member by member
 * (null removes), anything else replaces. */
int ks__json_merge_patch(cJSON **target, const cJSON *patch)
{
    if (!cJSON_IsObject(patch)) {
        cJSON *copy = cJSON_Duplicate(patch, 1);
        if (!copy)
            return KS_ENOMEM;
        cJSON_Delete(*target);
        *target = copy;
        return 0;
    }
    if (!cJSON_IsObject(*target)) {
        cJSON *obj = cJSON_CreateObject();
        if (!obj)
            return KS_ENOMEM;
        cJSON_Delete(*target);
        *target = obj;
    }
    const cJSON *member;
    cJSON_ArrayForEach(member, patch)
    {
        if (cJSON_IsNull(member)) {
            cJSON_DeleteItemFromObjectCaseSensitive(*target, member->string);
            continue;
        }
        cJSON *cur = cJSON_DetachItemFromObjectCaseSensitive(*target, member->string);
        int rc = ks__json_merge_patch(&cur, member);
        if (rc != 0 || !cJSON_AddItemToObject(*target, member->string, cur)) {
            cJSON_Delete(cur);
            return rc ? rc : KS_ENOMEM;
        }
    }
    return 0;
}

int ks__json_merge_patch_member(cJSON *doc, const char *name, const cJSON *patch)
{
    cJSON *member = cJSON_DetachItemFromObjectCaseSensitive(doc, name);
    if (!member && !(member = cJSON_CreateObject()))
        return KS_ENOMEM;
    int rc = ks__json_merge_patch(&member, patch);
    if (rc != 0 || !cJSON_AddItemToObject(doc, name, member)) {
        cJSON_Delete(member);
        return rc ? rc : KS_ENOMEM;
    }
    return 0;
}
