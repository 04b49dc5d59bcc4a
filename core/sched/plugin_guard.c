/*
 * Crash reports and the call watchdog for in-process plugins (see plugin_guard.h).
 */
#define _GNU_SOURCE
#include "sched/plugin_guard.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "api/intern.h"
#include "api/objects.h"
#include "sched/framework.h"
#include "util/clock.h"

_Thread_local ks_guard_slot ks__guard_tls;

/* Every registered slot; a slot leaves when its thread exits (the key's destructor). */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static ks_guard_slot *slots;
static pthread_key_t slot_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* Each registered thread's alternate signal stack, so that a plugin that overflows its stack
 * (endless recursion) is still reported: the handler cannot run on the exhausted stack. */
#define ALT_STACK_SIZE (64 * 1024)
static _Thread_local void *alt_stack;

static void slot_gone(void *p)
{
    ks_guard_slot *s = p;
    if (alt_stack) {
        stack_t off = {.ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
        free(alt_stack);
        alt_stack = NULL;
    }
    pthread_mutex_lock(&reg_mu);
    for (ks_guard_slot **at = &slots; *at; at = &(*at)->next)
        if (*at == s) {
            *at = s->next;
            break;
        }
    pthread_mutex_unlock(&reg_mu);
}

static void make_key(void) { pthread_key_create(&slot_key, slot_gone); }

void ks__guard_register(ks_guard_slot *s)
{
    pthread_once(&key_once, make_key);
    atomic_init(&s->node, KS_SYM_ABSENT);
    pthread_mutex_lock(&reg_mu);
    s->next = slots;
    slots = s;
    s->registered = 1;
    pthread_mutex_unlock(&reg_mu);
    pthread_setspecific(slot_key, s);
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE) &&
        (alt_stack = malloc(ALT_STACK_SIZE))) {
        stack_t ss = {.ss_sp = alt_stack, .ss_size = ALT_STACK_SIZE};
        if (sigaltstack(&ss, NULL) != 0) {
            free(alt_stack);
            alt_stack = NULL;
        }
    }
}

char *ks__guard_origin_of(const void *addr)
{
    Dl_info here, there;
    if (!dladdr((const void *)ks__guard_origin_of, &here) || !dladdr(addr, &there) ||
        !there.dli_fname || there.dli_fbase == here.dli_fbase)
        return NULL;
    return strdup(there.dli_fname);
}

/* ---- async-signal-safe output -------------------------------------------------------------- */

void ks__guard_write(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

void ks__guard_write_str(int fd, const char *s)
{
    if (s)
        ks__guard_write(fd, s, strlen(s));
}

void ks__guard_write_int(int fd, long long v)
{
    char buf[24];
    size_t i = sizeof(buf);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        buf[--i] = (char)('0' + u % 10);
    while ((u /= 10) && i > 1);
    if (v < 0)
        buf[--i] = '-';
    ks__guard_write(fd, buf + i, sizeof(buf) - i);
}

void ks__guard_write_json_str(int fd, const char *s)
{
    char buf[512];
    size_t n = 0;
    buf[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (n > sizeof(buf) - 8) {
            ks__guard_write(fd, buf, n);
            n = 0;
        }
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c == '\n') {
            buf[n++] = '\\';
            buf[n++] = 'n';
        } else if (c < 0x20) {
            static const char hex[] = "0123456789abcdef";
            memcpy(buf + n, "\\u00", 4);
            buf[n + 4] = hex[c >> 4];
            buf[n + 5] = hex[c & 15];
            n += 6;
        } else {
            buf[n++] = (char)c;
        }
    }
    buf[n++] = '"';
    ks__guard_write(fd, buf, n);
}

/* ---- reports ------------------------------------------------------------------------------- */

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    default:
        return "signal";
    }
}

/* The report's names from a slot (strings that live as long as the framework / the pod). */
static void fill_report(ks_guard_report *r, const ks_plugin_inst *in, int ep, const ks_pod *pod,
                        ks_sym node)
{
    if (in) {
        r->plugin = in->name;
        r->origin = in->origin ? in->origin : "in-tree";
        r->point = ep >= 0 && ep < KS_EP_COUNT ? ks__ep_label((ks_ep)ep) : "?";
    }
    if (in && pod) {
        r->pod_ns = ks__sym_str(pod->ns);
        r->pod_name = ks__sym_str(pod->name);
    }
    if (in && node != KS_SYM_ABSENT)
        r->node = ks__sym_str(node);
}

/* "plugin "X" (origin) in Filter, pod ns/name, node n" */
static void write_names(int fd, const ks_guard_report *r)
{
    ks__guard_write_str(fd, "plugin \"");
    ks__guard_write_str(fd, r->plugin);
    ks__guard_write_str(fd, "\" (");
    ks__guard_write_str(fd, r->origin);
    ks__guard_write_str(fd, ") at ");
    ks__guard_write_str(fd, r->point);
    if (r->pod_name) {
        ks__guard_write_str(fd, ", pod ");
        ks__guard_write_str(fd, r->pod_ns);
        ks__guard_write_str(fd, "/");
        ks__guard_write_str(fd, r->pod_name);
    }
    if (r->node) {
        ks__guard_write_str(fd, ", node ");
        ks__guard_write_str(fd, r->node);
    }
}

static _Atomic(ks_guard_fatal_fn) fatal_hook;
static void *fatal_ctx;
static atomic_int fatal_once; /* the first fatal report wins; later ones wait for the exit */
static atomic_long crashing_tid;

void ks__guard_set_fatal_hook(ks_guard_fatal_fn fn, void *ctx)
{
    /* A reader (a signal handler, the watchdog) sees either no hook or one with its context. */
    if (fn) {
        fatal_ctx = ctx;
        atomic_signal_fence(memory_order_seq_cst);
        atomic_store(&fatal_hook, fn);
    } else {
        atomic_store(&fatal_hook, NULL);
        atomic_signal_fence(memory_order_seq_cst);
        fatal_ctx = NULL;
    }
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    long tid = (long)syscall(SYS_gettid);
    if (atomic_exchange(&fatal_once, 1)) {
        /* Another thread reports (and will end the process): wait for that. Or this one raised
         * another signal while reporting: the default action. */
        if (atomic_load(&crashing_tid) != tid)
            for (;;)
                pause();
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    atomic_store(&crashing_tid, tid);
    ks_guard_slot *s = &ks__guard_tls;
    ks_guard_report r = {.sig = sig, .signame = sig_name(sig)};
    if (s->registered)
        fill_report(&r, atomic_load_explicit(&s->inst, memory_order_relaxed),
                    atomic_load_explicit(&s->ep, memory_order_relaxed),
                    atomic_load_explicit(&s->pod, memory_order_relaxed),
                    atomic_load_explicit(&s->node, memory_order_relaxed));
    int fd = 2;
    ks__guard_write_str(fd, "kubesched: fatal ");
    ks__guard_write_str(fd, r.signame);
    if (sig == SIGSEGV || sig == SIGBUS) {
        char addr[2 + 16 + 1] = "0x";
        uintptr_t a = (uintptr_t)si->si_addr;
        int n = 2;
        for (int sh = (int)sizeof(a) * 8 - 4; sh >= 0; sh -= 4)
            if ((a >> sh) || n > 2 || sh == 0)
                addr[n++] = "0123456789abcdef"[(a >> sh) & 15];
        addr[n] = '\0';
        ks__guard_write_str(fd, " (address ");
        ks__guard_write_str(fd, addr);
        ks__guard_write_str(fd, ")");
    }
    if (r.plugin) {
        ks__guard_write_str(fd, " in ");
        write_names(fd, &r);
        ks__guard_write_str(fd, "\n");
    } else {
        ks__guard_write_str(fd, " outside any plugin call (a kubesched bug: please report it)\n");
    }
    ks__guard_write_str(fd, "backtrace (resolve kubesched(+0x...) with addr2line -e kubesched, "
                            "a plugin's with addr2line -e its .so):\n");
    void *frames[64];
    int nf = backtrace(frames, 64);
    backtrace_symbols_fd(frames, nf, fd);
    ks_guard_fatal_fn hook = atomic_load(&fatal_hook);
    if (hook)
        hook(fatal_ctx, &r);
    signal(sig, SIG_DFL);
    raise(sig); /* pending until the handler returns (sig is blocked): then the default action */
}

/* ---- watchdog ------------------------------------------------------------------------------ */

static pthread_t wd_thread;
static int wd_running;
static atomic_int wd_stop;
static pthread_mutex_t wd_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond; /* CLOCK_MONOTONIC: ks__guard_stop wakes the thread at once */
static int64_t wd_deadline_ns; /* --plugin-call-deadline; 0: only per-plugin ones */
static _Atomic int64_t wd_shortest_ns; /* the shortest deadline in use: the tick follows it */

static int watched(int ep) { return ep != KS_EP_PRE_BIND && ep != KS_EP_BIND; }

static void format_duration(char *out, size_t len, int64_t ns)
{
    if (ns % 1000000000LL == 0)
        snprintf(out, len, "%llds", (long long)(ns / 1000000000LL));
    else
        snprintf(out, len, "%lldms", (long long)(ns / 1000000LL));
}

/* The deadline of a call of in at ep: its own, else the global one; 0: not watched. */
static int64_t deadline_of(const ks_plugin_inst *in, int ep)
{
    if (!watched(ep))
        return 0;
    return in->deadline_ns >= 0 ? in->deadline_ns : wd_deadline_ns;
}

static void watchdog_fire(const ks_plugin_inst *in, int ep, const ks_pod *pod, ks_sym node,
                          int64_t elapsed, int64_t deadline)
{
    if (atomic_exchange(&fatal_once, 1)) /* a crash is being reported */
        return;
    ks_guard_report r = {.signame = "deadline", .elapsed_ms = elapsed / 1000000};
    fill_report(&r, in, ep, pod, node);
    char dl[32];
    format_duration(dl, sizeof(dl), deadline);
    ks__guard_write_str(2, "kubesched: ");
    write_names(2, &r);
    char tail[160];
    snprintf(tail, sizeof(tail),
             ": the call has run for %lldms, past its deadline of %s (%s); exiting\n",
             (long long)r.elapsed_ms, dl,
             in->deadline_ns >= 0 ? "its args' kubeschedCallDeadline" : "--plugin-call-deadline");
    ks__guard_write_str(2, tail);
    ks_guard_fatal_fn hook = atomic_load(&fatal_hook);
    if (hook)
        hook(fatal_ctx, &r);
    _exit(KS_GUARD_EXIT_DEADLINE);
}

static void *watchdog_main(void *arg)
{
    (void)arg;
    while (!atomic_load(&wd_stop)) {
        int64_t tick = atomic_load(&wd_shortest_ns) / 4;
        if (tick < 10 * 1000000LL)
            tick = 10 * 1000000LL;
        if (tick > 1000000000LL)
            tick = 1000000000LL;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t until = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + tick;
        ts.tv_sec = (time_t)(until / 1000000000LL);
        ts.tv_nsec = (long)(until % 1000000000LL);
        pthread_mutex_lock(&wd_mu);
        while (!atomic_load(&wd_stop) && pthread_cond_timedwait(&wd_cond, &wd_mu, &ts) == 0)
            ;
        pthread_mutex_unlock(&wd_mu);
        if (atomic_load(&wd_stop))
            break;
        int64_t now = ks__clock_now_ns();
        pthread_mutex_lock(&reg_mu);
        for (ks_guard_slot *s = slots; s; s = s->next) {
            uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
            const ks_plugin_inst *in = atomic_load_explicit(&s->inst, memory_order_acquire);
            int ep = atomic_load_explicit(&s->ep, memory_order_relaxed);
            int64_t deadline = in ? deadline_of(in, ep) : 0;
            if (!in || deadline <= 0) {
                s->wd_seq = 0;
                continue;
            }
            if (seq != s->wd_seq) { /* a new call since the last look */
                s->wd_seq = seq;
                s->wd_since = now;
                s->wd_reported = 0;
                continue;
            }
            if (s->wd_reported || now - s->wd_since < deadline)
                continue;
            const ks_pod *pod = atomic_load_explicit(&s->pod, memory_order_relaxed);
            ks_sym node = atomic_load_explicit(&s->node, memory_order_relaxed);
            /* still the same call after reading its names: they belong to it */
            if (atomic_load_explicit(&s->seq, memory_order_acquire) != seq ||
                atomic_load_explicit(&s->inst, memory_order_acquire) != in)
                continue;
            s->wd_reported = 1;
            pthread_mutex_unlock(&reg_mu); /* the hook may take a while (flushing) */
            watchdog_fire(in, ep, pod, node, now - s->wd_since, deadline);
            pthread_mutex_lock(&reg_mu);
            break; /* the list may have changed */
        }
        pthread_mutex_unlock(&reg_mu);
    }
    return NULL;
}

/* ---- installation -------------------------------------------------------------------------- */

int ks__guard_install(int64_t deadline_ns, char *err, size_t errlen)
{
    static int installed;
    if (!installed) {
        /* backtrace() loads libgcc_s on its first use (malloc, dlopen): do that now, not in a
         * signal handler. */
        void *frames[4];
        backtrace(frames, 4);
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_crash;
        /* Not SA_RESETHAND: that resets the action for the whole process, so a second thread
         * faulting in the same plugin (Filter runs on several workers) would kill the process in
         * the middle of the first report. A fault inside the handler on the reporting thread
         * (the signal is blocked there) gets the default action from the kernel. */
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            if (sigaction(sigs[i], &sa, NULL) != 0) {
                snprintf(err, errlen, "installing the crash handler for %s: %s", sig_name(sigs[i]),
                         strerror(errno));
                return KS_EINVAL;
            }
        installed = 1;
    }
    wd_deadline_ns = deadline_ns > 0 ? deadline_ns : 0;
    return deadline_ns > 0 ? ks__guard_watch(deadline_ns, err, errlen) : 0;
}

int64_t ks__guard_deadline(void) { return wd_deadline_ns; }

int ks__guard_watch(int64_t deadline_ns, char *err, size_t errlen)
{
    int64_t cur = atomic_load(&wd_shortest_ns);
    if (cur == 0 || deadline_ns < cur)
        atomic_store(&wd_shortest_ns, deadline_ns);
    if (!wd_running) {
        atomic_store(&wd_stop, 0);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&wd_cond, &ca);
        pthread_condattr_destroy(&ca);
        /* The thread takes no asynchronous signal: live mode waits for SIGTERM/SIGINT on its
         * own signal thread (the others block them), and a thread started here, before that
         * mask, would otherwise receive them and die of the default action. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&wd_thread, NULL, watchdog_main, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc != 0) {
            snprintf(err, errlen, "starting the plugin watchdog thread: %s", strerror(rc));
            return KS_ENOMEM;
        }
        wd_running = 1;
    }
    return 0;
}

void ks__guard_stop(void)
{
    if (!wd_running)
        return;
    pthread_mutex_lock(&wd_mu);
    atomic_store(&wd_stop, 1);
    pthread_cond_signal(&wd_cond);
    pthread_mutex_unlock(&wd_mu);
    pthread_join(wd_thread, NULL);
    wd_running = 0;
}
