/*
 * The names of the KS_E... codes (sdk/kubesched/plugin.h's KS_ERRNO_MAP), for the core's own
 * messages; plugins get the same text through the host table's strerror.
 *
 * Threads: any; pure.
 */
#ifndef KS_CORE_ERRORS_H
#define KS_CORE_ERRORS_H

/* "success" for 0, the code's text for a KS_E... value, "unknown error" otherwise. Static
 * storage. */
const char *ks__strerror(int err);

#endif
