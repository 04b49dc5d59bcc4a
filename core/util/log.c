/* klog-style logging; see log.h. */
#include "util/log.h"

#include <stdio.h>
#include <sys/time.h>
#include <time.h>

int ks__log_verbosity = 0;

int ks__log_enabled(int v) { return v <= ks__log_verbosity; }

void ks__logv(char severity, const char *who, const char *fmt, va_list ap)
{
    char msg[2048];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "%c%02d%02d %02d:%02d:%02d.%06ld %s] %s\n", severity, tm.tm_mon + 1, tm.tm_mday,
            tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec, who ? who : "kubesched", msg);
}

void ks__log(char severity, const char *who, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ks__logv(severity, who, fmt, ap);
    va_end(ap);
}
