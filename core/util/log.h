/*
 * Logging: klog-like lines on stderr, "I1130 15:04:05.123456 kubesched] msg", with -v levels.
 * Thread-safe (one fprintf per line).
 */
#ifndef KS_CORE_LOG_H
#define KS_CORE_LOG_H

#include <stdarg.h>

#include "kubesched/plugin.h"

extern int ks__log_verbosity;

int ks__log_enabled(int v);
/* severity: 'I', 'W', 'E'. who: component or plugin name (may be NULL). */
void ks__logv(char severity, const char *who, const char *fmt, va_list ap);
KS_PRINTF(3, 4) void ks__log(char severity, const char *who, const char *fmt, ...);

#endif
