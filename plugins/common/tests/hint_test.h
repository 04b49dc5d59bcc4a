/*
 * Helpers for the plugins' queueing-hint tests (plugins/<name>/tests/test_<name>_hints.c), as
 * upstream's *_test.go "isSchedulableAfter*" tables: create one instance of a plugin, check its
 * events_with_hints against upstream's EventsToRegister, and deliver one event (with its old and
 * new objects) to the hint that the framework would call for it (the registration the event
 * matches, by ks__event_matches). Header-only; one plugin per test file. Tests only.
 */
#ifndef KS_PLUGINS_COMMON_TESTS_HINT_TEST_H
#define KS_PLUGINS_COMMON_TESTS_HINT_TEST_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/volume_objects.h"
#include "config/config_args.h"
#include "sched/framework.h"
#include "sched/scheduler.h"
#include "harness.h"

static struct {
    const ks_plugin_desc *desc;
    void *self;
    cJSON *json;
    struct ks_args args;
    size_t n;
    ks_cluster_event_hint ev[16];
} HT;

/* Creates the plugin (args: JSON text with single quotes, or NULL) and reads its events. */
static inline void ht_plugin(const ks_plugin_desc *desc, const char *args)
{
    struct ks_error e = {{0}};
    memset(&HT, 0, sizeof(HT));
    HT.desc = desc;
    if (args) {
        HT.json = th_json(args);
        HT.args.json = HT.json;
    }
    HT.self = desc->create ? desc->create(&HT.args, &e) : NULL;
    cr_assert(!desc->create || HT.self, "create %s: %s", desc->name, e.msg);
    cr_assert_not_null(desc->events_with_hints, "%s has no events_with_hints", desc->name);
    cr_assert_null(desc->events_to_register, "%s: in-tree plugins register with hints only",
                   desc->name);
    HT.n = desc->events_with_hints(HT.self, HT.ev, 16);
    cr_assert_leq(HT.n, 16);
}

static struct ks__volobj *ht_objs[64];
static size_t ht_nobjs;

static inline void ht_fini(void)
{
    for (size_t i = 0; i < ht_nobjs; i++)
        ks__volobj_unref(ht_objs[i]);
    ht_nobjs = 0;
    if (HT.self && HT.desc->destroy)
        HT.desc->destroy(HT.self);
    cJSON_Delete(HT.json);
    free(HT.args.text);
    memset(&HT, 0, sizeof(HT));
    th_fini();
}

/* Registration i is {res, actions}, with (has_hint) or without (NULL: always Queue) a hint. */
static inline void ht_expect_event(size_t i, ks_event_resource res, uint32_t actions, int has_hint)
{
    cr_assert_lt(i, HT.n, "%s registers only %zu events", HT.desc->name, HT.n);
    cr_expect_eq(HT.ev[i].event.resource, res, "%s event %zu: resource", HT.desc->name, i);
    cr_expect_eq(HT.ev[i].event.actions, actions, "%s event %zu: actions %#x", HT.desc->name, i,
                 HT.ev[i].event.actions);
    cr_expect_eq(HT.ev[i].hint != NULL, has_hint, "%s event %zu: hint", HT.desc->name, i);
}

/* What the framework would get for this event: the hint of the one registration it matches
 * (KS_QUEUE for a NULL hint); the test fails when none or several match. */
static inline ks_queueing_hint ht_hint(const ks_pod *pod, ks_event_resource res, uint32_t action,
                                       const ks_pod *old_pod, const ks_pod *new_pod,
                                       const ks_node *old_node, const ks_node *new_node)
{
    ks_event_info ev = {.event = {res, action},
                        .old_pod = old_pod,
                        .new_pod = new_pod,
                        .old_node = old_node,
                        .new_node = new_node};
    size_t hit = HT.n;
    for (size_t i = 0; i < HT.n; i++) {
        if (!ks__event_matches(&HT.ev[i].event, &ev.event))
            continue;
        cr_assert_eq(hit, HT.n, "%s: event %u/%#x matches two registrations", HT.desc->name,
                     (unsigned)res, action);
        hit = i;
    }
    cr_assert_neq(hit, HT.n, "%s: event %u/%#x is not registered", HT.desc->name, (unsigned)res,
                  action);
    return HT.ev[hit].hint ? HT.ev[hit].hint(HT.self, pod, &ev) : KS_QUEUE;
}

/* The same for a storage event (ABI 1.5): old_obj / new_obj are the parsed objects of the
 * resource's kind (ht_volobj), NULL where the event has none. */
static inline ks_queueing_hint ht_obj(const ks_pod *pod, ks_event_resource res, uint32_t action,
                                      const void *old_obj, const void *new_obj)
{
    ks_event_info ev = {.event = {res, action}, .old_obj = old_obj, .new_obj = new_obj};
    size_t hit = HT.n;
    for (size_t i = 0; i < HT.n; i++) {
        if (!ks__event_matches(&HT.ev[i].event, &ev.event))
            continue;
        cr_assert_eq(hit, HT.n, "%s: event %u/%#x matches two registrations", HT.desc->name,
                     (unsigned)res, action);
        hit = i;
    }
    cr_assert_neq(hit, HT.n, "%s: event %u/%#x is not registered", HT.desc->name, (unsigned)res,
                  action);
    return HT.ev[hit].hint ? HT.ev[hit].hint(HT.self, pod, &ev) : KS_QUEUE;
}

/* A storage object (PersistentVolume, claim, StorageClass, ...) from JSON text with single
 * quotes, read as the API server stored it; released by ht_fini. */
static inline const void *ht_volobj(const char *text)
{
    char err[512] = "";
    struct ks__volobj *o = NULL;
    cJSON *obj = th_json(text);
    int rc = ks__volobj_from_json(obj, &o, err, sizeof(err));
    cJSON_Delete(obj);
    cr_assert_eq(rc, 0, "ht_volobj: %s", err);
    cr_assert_lt(ht_nobjs, 64);
    ht_objs[ht_nobjs++] = o;
    return o;
}

/* Whether the plugin registered anything this event matches. */
static inline int ht_registered(ks_event_resource res, uint32_t action)
{
    ks_cluster_event e = {res, action};
    for (size_t i = 0; i < HT.n; i++)
        if (ks__event_matches(&HT.ev[i].event, &e))
            return 1;
    return 0;
}

/* Shorthands: node events and pod events. */
static inline ks_queueing_hint ht_node(const ks_pod *pod, uint32_t action, const ks_node *old_node,
                                       const ks_node *new_node)
{
    return ht_hint(pod, KS_RES_NODE, action, NULL, NULL, old_node, new_node);
}
static inline ks_queueing_hint ht_pod(const ks_pod *pod, ks_event_resource res, uint32_t action,
                                      const ks_pod *old_pod, const ks_pod *new_pod)
{
    return ht_hint(pod, res, action, old_pod, new_pod, NULL, NULL);
}

#endif
