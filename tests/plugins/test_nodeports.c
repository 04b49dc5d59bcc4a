/* NodePorts: upstream nodeports/node_ports_test.go (TestNodePorts, TestPreFilterDisabled) plus the
 * registered events. Ports are written as upstream's newPod helper: "PROTO/hostIP/port". */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

extern const ks_plugin_desc ks_plugin_node_ports;

TestSuite(node_ports, .init = th_init, .fini = th_fini);

#define ERR "node(s) didn't have free ports for the requested pod ports"

static int seq;

/* "UDP/127.0.0.1/8080,TCP/0.0.0.0/8001" -> container ports JSON. */
static void ports_json(const char *spec, char *out, size_t len)
{
    char copy[512], *save = NULL;
    size_t at = 0;
    snprintf(copy, sizeof(copy), "%s", spec);
    out[0] = '\0';
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char proto[16] = "", ip[64] = "";
        int port = 0;
        cr_assert_eq(sscanf(tok, "%15[^/]/%63[^/]/%d", proto, ip, &port), 3);
        at += (size_t)snprintf(out + at, len - at,
                               "%s{'containerPort':%d,'hostPort':%d,'protocol':'%s','hostIP':'%s'}",
                               at ? "," : "", port, port, proto, ip);
    }
}

static ks_pod *pod_with(const char *ports)
{
    char p[1024], json[2048];
    ports_json(ports, p, sizeof(p));
    seq++;
    snprintf(json, sizeof(json),
             "{'metadata':{'name':'p%d','namespace':'default','uid':'p%d'},"
             "'spec':{'containers':[{'name':'c','image':'pause','ports':[%s]}]}}",
             seq, seq, p);
    return th_pod(json);
}

/* A cluster with one node m1 running a pod that uses `used`. */
static th_cluster *node_using(const char *used)
{
    char p[1024], json[2048];
    th_cluster *c = th_cluster_new();
    th_cluster_add_node(c, "{'metadata':{'name':'m1'},'status':{'allocatable':{'cpu':'4',"
                           "'memory':'8Gi','pods':'110'}}}");
    if (used) {
        ports_json(used, p, sizeof(p));
        seq++;
        snprintf(
            json, sizeof(json),
            "{'metadata':{'name':'e%d','namespace':'default','uid':'e%d'},"
            "'spec':{'nodeName':'m1','containers':[{'name':'c','image':'pause','ports':[%s]}]}}",
            seq, seq, p);
        th_cluster_add_pod(c, json);
    }
    return c;
}

static ks_code filter(ks_pod *pod, const char *used, char *r, size_t len)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_ports, NULL);
    return th_filter(p, node_using(used), pod, "m1", r, len);
}

#define FITS(want, used)                                                                           \
    do {                                                                                           \
        char r_[256];                                                                              \
        cr_assert_eq(filter(pod_with(want), used, r_, sizeof(r_)), KS_SUCCESS, "%s", r_);          \
        cr_assert_str_eq(r_, "");                                                                  \
    } while (0)
#define CONFLICTS(want, used)                                                                      \
    do {                                                                                           \
        char r_[256];                                                                              \
        cr_assert_eq(filter(pod_with(want), used, r_, sizeof(r_)), KS_UNSCHEDULABLE);              \
        cr_assert_str_eq(r_, ERR);                                                                 \
    } while (0)

Test(node_ports, pod_without_host_ports_skips_prefilter)
{
    th_plugin *p = th_plugin_new(&ks_plugin_node_ports, NULL);
    ks_pod *pod = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                         "'spec':{'containers':[{'name':'c','image':'pause',"
                         "'ports':[{'containerPort':80}]}]}}");
    cr_assert_eq(ks_plugin_node_ports.pre_filter(NULL, NULL, pod, NULL, NULL), KS_SKIP);
    char r[256];
    cr_assert_eq(th_filter(p, node_using("TCP/0.0.0.0/80"), pod, "m1", r, sizeof(r)), KS_SUCCESS);
}

Test(node_ports, other_port_fits) { FITS("UDP/127.0.0.1/8080", "UDP/127.0.0.1/9090"); }
Test(node_ports, same_udp_port_conflicts) { CONFLICTS("UDP/127.0.0.1/8080", "UDP/127.0.0.1/8080"); }
Test(node_ports, same_tcp_port_conflicts) { CONFLICTS("TCP/127.0.0.1/8080", "TCP/127.0.0.1/8080"); }
Test(node_ports, different_host_ip_fits) { FITS("TCP/127.0.0.1/8080", "TCP/127.0.0.2/8080"); }
Test(node_ports, different_protocol_fits) { FITS("UDP/127.0.0.1/8080", "TCP/127.0.0.1/8080"); }

Test(node_ports, second_udp_port_conflicts)
{
    CONFLICTS("UDP/127.0.0.1/8000,UDP/127.0.0.1/8080", "UDP/127.0.0.1/8080");
}

Test(node_ports, first_tcp_port_conflicts)
{
    CONFLICTS("TCP/127.0.0.1/8001,UDP/127.0.0.1/8080", "TCP/127.0.0.1/8001,UDP/127.0.0.1/8081");
}

Test(node_ports, wanted_any_ip_conflicts_with_specific_ip)
{
    CONFLICTS("TCP/0.0.0.0/8001", "TCP/127.0.0.1/8001");
}

Test(node_ports, any_ip_among_wanted_ports_conflicts)
{
    CONFLICTS("TCP/10.0.10.10/8001,TCP/0.0.0.0/8001", "TCP/127.0.0.1/8001");
}

Test(node_ports, specific_ip_conflicts_with_used_any_ip)
{
    CONFLICTS("TCP/127.0.0.1/8001", "TCP/0.0.0.0/8001");
}

Test(node_ports, any_ip_with_other_protocol_fits)
{
    FITS("UDP/127.0.0.1/8001", "TCP/0.0.0.0/8001");
}

Test(node_ports, udp_any_ip_conflicts)
{
    CONFLICTS("UDP/127.0.0.1/8001", "TCP/0.0.0.0/8001,UDP/0.0.0.0/8001");
}

Test(node_ports, empty_host_ip_and_protocol_mean_any_ip_tcp)
{
    char r[256];
    ks_pod *pod = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                         "'spec':{'containers':[{'name':'c','image':'pause',"
                         "'ports':[{'containerPort':80,'hostPort':8001}]}]}}");
    cr_assert_eq(filter(pod, "TCP/127.0.0.1/8001", r, sizeof(r)), KS_UNSCHEDULABLE);
    cr_assert_str_eq(r, ERR);
    pod = th_pod("{'metadata':{'name':'q','namespace':'default','uid':'q'},"
                 "'spec':{'containers':[{'name':'c','image':'pause',"
                 "'ports':[{'containerPort':80,'hostPort':8001}]}]}}");
    cr_assert_eq(filter(pod, "UDP/127.0.0.1/8001", r, sizeof(r)), KS_SUCCESS);
}

Test(node_ports, regular_init_container_host_port_is_skipped)
{
    char r[256];
    ks_pod *pod = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                         "'spec':{'initContainers':[{'name':'i','image':'pause',"
                         "'ports':[{'containerPort':8001,'hostPort':8001,'protocol':'TCP'}]}],"
                         "'containers':[{'name':'c','image':'pause'}]}}");
    cr_assert_eq(ks_plugin_node_ports.pre_filter(NULL, NULL, pod, NULL, NULL), KS_SKIP);
    cr_assert_eq(filter(pod, "TCP/0.0.0.0/8001", r, sizeof(r)), KS_SUCCESS);
}

Test(node_ports, sidecar_init_container_host_port_conflicts)
{
    char r[256];
    ks_pod *pod = th_pod("{'metadata':{'name':'p','namespace':'default','uid':'u'},"
                         "'spec':{'initContainers':[{'name':'i','image':'pause',"
                         "'restartPolicy':'Always',"
                         "'ports':[{'containerPort':8001,'hostPort':8001,'protocol':'TCP'}]}],"
                         "'containers':[{'name':'c','image':'pause'}]}}");
    cr_assert_eq(filter(pod, "TCP/0.0.0.0/8001", r, sizeof(r)), KS_UNSCHEDULABLE);
    cr_assert_str_eq(r, ERR);
}

Test(node_ports, empty_node_fits) { FITS("TCP/0.0.0.0/80", NULL); }
