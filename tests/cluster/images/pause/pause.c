/*
 * The pod sandbox's pause process for tests/cluster (no registry can be reached, so not
 * registry.k8s.io/pause): it holds the pod's namespaces and does nothing until SIGTERM or SIGINT,
 * then exits 0. As PID 1 of the sandbox it also reaps any zombie handed to it. Built static
 * (build-images.sh) and put alone in an image FROM scratch.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
    (void)sig;
    stop = 1;
}
static void on_child(int sig)
{
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void)
{
    struct sigaction sa = {0};

    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_child;
    sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);
    while (!stop)
        pause();
    return 0;
}
