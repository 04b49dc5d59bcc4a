/* The names of the KS_E... codes; see errors.h. */
#include "util/errors.h"

#include "kubesched/plugin.h"

const char *ks__strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
#define KS_ERRNO_CASE(name, val, text)                                                             \
    case KS_E##name:                                                                               \
        return text;
        KS_ERRNO_MAP(KS_ERRNO_CASE)
#undef KS_ERRNO_CASE
    default:
        return "unknown error";
    }
}
