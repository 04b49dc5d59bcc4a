/*
 * tests/cluster's workload: what the pods kubesched schedules run, so that a test can see the
 * kubelet really ran them. Prints one line naming its pod and node (from the downward API's
 * POD_NAME and NODE_NAME), then a heartbeat every 10 s, and exits 0 on SIGTERM after saying so.
 * Built static (build-images.sh), alone in an image FROM scratch.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
    (void)sig;
    stop = 1;
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

int main(void)
{
    struct sigaction sa = {0};
    unsigned beats = 0;

    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("workload: pod %s running on node %s\n", env_or("POD_NAME", "?"),
           env_or("NODE_NAME", "?"));
    while (!stop) {
        sleep(10);
        if (!stop)
            printf("workload: heartbeat %u\n", ++beats);
    }
    printf("workload: SIGTERM, exiting\n");
    return 0;
}
