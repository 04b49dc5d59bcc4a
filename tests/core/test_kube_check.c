/*
 * The Kubernetes field schema and its checker (core/api/kube_check.c, kube_schema.h): kinds
 * classified, clean objects left alone, each type rule and unknown fields reported with the words
 * of the kube-apiserver's strict decoding. The expected messages are those sigs.k8s.io/json
 * prints for the same JSON decoded into the k8s.io/api v0.37.0 types, except where
 * kube_schema.h says kubesched words it differently (Quantity given a bool).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/kube_schema.h"

/* ---- Classifying kinds ---- */

static void expect_class(const char *api_version, const char *kind, ks_kube_kind_class want,
                         const char *want_suggestion)
{
    const char *suggestion = "unset";
    ks_kube_kind_class got = ks__kube_classify(api_version, kind, &suggestion);
    cr_expect_eq(got, want, "%s %s: class %d, want %d", api_version ? api_version : "(null)",
                 kind ? kind : "(null)", got, want);
    if (want_suggestion)
        cr_expect(suggestion && strcmp(suggestion, want_suggestion) == 0,
                  "%s %s: suggestion %s, want %s", api_version, kind,
                  suggestion ? suggestion : "(null)", want_suggestion);
    else
        cr_expect_null(suggestion, "%s %s: no suggestion, got %s", api_version, kind, suggestion);
}

Test(kube_check, classify_checked_kinds)
{
    static const char *checked[][2] = {
        {"v1", "Pod"},
        {"v1", "Node"},
        {"v1", "Namespace"},
        {"v1", "Service"},
        {"v1", "ReplicationController"},
        {"v1", "PersistentVolume"},
        {"v1", "PersistentVolumeClaim"},
        {"apps/v1", "ReplicaSet"},
        {"apps/v1", "StatefulSet"},
        {"apps/v1", "Deployment"},
        {"apps/v1", "DaemonSet"},
        {"policy/v1", "PodDisruptionBudget"},
        {"storage.k8s.io/v1", "StorageClass"},
        {"storage.k8s.io/v1", "CSINode"},
        {"storage.k8s.io/v1", "CSIDriver"},
        {"storage.k8s.io/v1", "CSIStorageCapacity"},
        {"storage.k8s.io/v1", "VolumeAttachment"},
        {"resource.k8s.io/v1", "ResourceClaim"},
        {"resource.k8s.io/v1", "ResourceSlice"},
        {"resource.k8s.io/v1", "DeviceClass"},
        {"resource.k8s.io/v1", "ResourceClaimTemplate"},
        {"scheduling.k8s.io/v1", "PriorityClass"},
    };
    for (size_t i = 0; i < sizeof(checked) / sizeof(checked[0]); i++)
        expect_class(checked[i][0], checked[i][1], KS_KUBE_KIND_CHECKED, NULL);
}

Test(kube_check, classify_builtin_kinds_without_a_schema)
{
    expect_class("v1", "ConfigMap", KS_KUBE_KIND_BUILTIN, NULL);
    expect_class("v1", "PodList", KS_KUBE_KIND_BUILTIN, NULL); /* lists: the caller flattens */
    expect_class("apps/v1", "ControllerRevision", KS_KUBE_KIND_BUILTIN, NULL);
    expect_class("batch/v1", "Job", KS_KUBE_KIND_BUILTIN, NULL);
    expect_class("policy/v1beta1", "PodDisruptionBudget", KS_KUBE_KIND_BUILTIN, NULL);
    expect_class("networking.k8s.io/v1", "Ingress", KS_KUBE_KIND_BUILTIN, NULL);
}

Test(kube_check, classify_unknown_kinds_of_builtin_groups_with_a_suggestion)
{
    expect_class("v1", "Nodes", KS_KUBE_KIND_UNKNOWN, "Node");
    expect_class("v1", "pod", KS_KUBE_KIND_UNKNOWN, "Pod");
    expect_class("v1", "NODE", KS_KUBE_KIND_UNKNOWN, "Node");
    expect_class("apps/v1", "Deploymnt", KS_KUBE_KIND_UNKNOWN, "Deployment");
    expect_class("apps/v1", "Statefulset", KS_KUBE_KIND_UNKNOWN, "StatefulSet");
    expect_class("v1", "Frobnicator", KS_KUBE_KIND_UNKNOWN, NULL);
    /* A built-in group in a version it does not have; and a kind of another group. */
    expect_class("apps/v9", "Deployment", KS_KUBE_KIND_UNKNOWN, NULL);
    expect_class("v1", "Deployment", KS_KUBE_KIND_UNKNOWN, NULL);
}

Test(kube_check, classify_custom_and_missing)
{
    expect_class("example.com/v1", "Foo", KS_KUBE_KIND_CUSTOM, NULL);
    expect_class("example.com/v1", "Pod", KS_KUBE_KIND_CUSTOM, NULL);
    expect_class("v2", "Pod", KS_KUBE_KIND_UNKNOWN, NULL); /* the core group, no such version */
    expect_class(NULL, "Pod", KS_KUBE_KIND_MISSING, NULL);
    expect_class("v1", NULL, KS_KUBE_KIND_MISSING, NULL);
    expect_class("", "Pod", KS_KUBE_KIND_MISSING, NULL);
    expect_class("v1", "", KS_KUBE_KIND_MISSING, NULL);

    cJSON *obj = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":5}");
    cr_expect_eq(ks__kube_classify_obj(obj, NULL), KS_KUBE_KIND_MISSING, "kind not a string");
    cJSON_Delete(obj);
    obj = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"pod\"}");
    const char *suggestion = NULL;
    cr_expect_eq(ks__kube_classify_obj(obj, &suggestion), KS_KUBE_KIND_UNKNOWN);
    cr_expect_str_eq(suggestion, "Pod");
    cJSON_Delete(obj);
    cr_expect_eq(ks__kube_classify_obj(NULL, NULL), KS_KUBE_KIND_MISSING);
}

/* ---- Checking objects ---- */

typedef struct found {
    size_t n;
    struct {
        ks_kube_problem what;
        char path[256], msg[512], key[64];
        int item_type;   /* cJSON type of the reported item */
        size_t path_len; /* strlen of the whole path (path[] keeps its start) */
    } p[16];
} found;

static void collect(void *ctx, const cJSON *item, ks_kube_problem what, const char *path,
                    const char *msg)
{
    found *f = ctx;
    if (f->n < sizeof(f->p) / sizeof(f->p[0])) {
        f->p[f->n].what = what;
        snprintf(f->p[f->n].path, sizeof(f->p[f->n].path), "%s", path);
        snprintf(f->p[f->n].msg, sizeof(f->p[f->n].msg), "%s", msg);
        snprintf(f->p[f->n].key, sizeof(f->p[f->n].key), "%s", item->string ? item->string : "");
        f->p[f->n].item_type = item->type & 0xff;
        f->p[f->n].path_len = strlen(path);
    }
    f->n++;
}

/* Checks json (an object; single quotes stand for double ones, to keep the tests readable). */
static found check(const char *json)
{
    char buf[8192];
    cr_assert_lt(strlen(json), sizeof(buf));
    size_t i = 0;
    for (; json[i]; i++)
        buf[i] = json[i] == '\'' ? '"' : json[i];
    buf[i] = '\0';
    cJSON *obj = cJSON_Parse(buf);
    cr_assert_not_null(obj, "test JSON does not parse: %s", buf);
    found f = {0};
    size_t n = ks__kube_check(obj, collect, &f);
    cr_expect_eq(n, f.n, "the count returned is the number reported");
    cr_expect_eq(ks__kube_check(obj, NULL, NULL), n, "the same count without a report function");
    cJSON_Delete(obj);
    return f;
}

static void expect_clean(const char *json)
{
    found f = check(json);
    cr_expect_eq(f.n, 0, "%zu problem(s), first: %s", f.n, f.n ? f.p[0].msg : "");
}

/* Exactly one problem, with these words. */
static void expect_one(const char *json, ks_kube_problem what, const char *path, const char *msg)
{
    found f = check(json);
    cr_assert_eq(f.n, 1, "%zu problems for %s (first: %s)", f.n, json, f.n ? f.p[0].msg : "");
    cr_expect_eq(f.p[0].what, what, "problem kind of %s", msg);
    cr_expect_str_eq(f.p[0].path, path);
    cr_expect_str_eq(f.p[0].msg, msg);
}

#define POD(rest) "{'apiVersion':'v1','kind':'Pod'," rest "}"
#define NODE(rest) "{'apiVersion':'v1','kind':'Node'," rest "}"
#define CONTAINER(rest) POD("'spec':{'containers':[{'name':'a'," rest "}]}")

Test(kube_check, clean_objects_have_no_problems)
{
    expect_clean(POD(
        "'metadata':{'name':'web-0','namespace':'default','uid':'1b4e28ba',"
        "'labels':{'app':'web','version':'1'},'annotations':{'a':'b'},"
        "'creationTimestamp':'2024-01-01T00:00:00Z','generation':1,"
        "'ownerReferences':[{'apiVersion':'apps/v1','kind':'StatefulSet','name':'web',"
        "'uid':'x','controller':true,'blockOwnerDeletion':true}],"
        "'managedFields':[{'manager':'kubectl','operation':'Apply','fieldsType':'FieldsV1',"
        "'fieldsV1':{'f:spec':{}},'time':'2024-01-01T00:00:00Z'}]},"
        "'spec':{'schedulerName':'default-scheduler','priority':1000,'nodeName':'n1',"
        "'nodeSelector':{'disk':'ssd'},'terminationGracePeriodSeconds':30,"
        "'hostNetwork':false,'restartPolicy':'Always',"
        "'containers':[{'name':'web','image':'nginx:1.27','command':['nginx'],"
        "'args':['-g','daemon off;'],'ports':[{'containerPort':80,'protocol':'TCP','name':'http'}],"
        "'env':[{'name':'A','value':'1'},{'name':'B','valueFrom':{'fieldRef':"
        "{'fieldPath':'metadata.name'}}}],"
        "'resources':{'requests':{'cpu':'250m','memory':'64Mi'},'limits':{'cpu':1,'memory':'128Mi'}"
        "},"
        "'readinessProbe':{'httpGet':{'path':'/','port':'http'},'periodSeconds':5},"
        "'livenessProbe':{'tcpSocket':{'port':80},'initialDelaySeconds':3},"
        "'volumeMounts':[{'name':'data','mountPath':'/data','readOnly':false}],"
        "'securityContext':{'runAsUser':1000,'runAsNonRoot':true,'capabilities':{'drop':['ALL']}}}]"
        ","
        "'volumes':[{'name':'data','persistentVolumeClaim':{'claimName':'data-web-0'}},"
        "{'name':'cfg','configMap':{'name':'cfg','defaultMode':420}}],"
        "'tolerations':[{'key':'node.kubernetes.io/not-ready','operator':'Exists',"
        "'effect':'NoExecute','tolerationSeconds':300}],"
        "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
        "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'zone','operator':'In','values':['a']}]}"
        "]}},"
        "'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':100,"
        "'podAffinityTerm':{'topologyKey':'kubernetes.io/hostname','labelSelector':"
        "{'matchLabels':{'app':'web'}}}}]}},"
        "'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'zone',"
        "'whenUnsatisfiable':'DoNotSchedule','labelSelector':{'matchLabels':{'app':'web'}}}],"
        "'overhead':{'cpu':'10m'}},"
        "'status':{'phase':'Running','startTime':'2024-01-01T00:00:01Z',"
        "'conditions':[{'type':'Ready','status':'True','lastTransitionTime':null}],"
        "'containerStatuses':[{'name':'web','ready':true,'restartCount':0,'image':'nginx',"
        "'imageID':'','state':{'running':{'startedAt':'2024-01-01T00:00:02Z'}}}]}"));

    expect_clean(NODE("'metadata':{'name':'n1','labels':{'kubernetes.io/hostname':'n1',"
                      "'topology.kubernetes.io/zone':'a'}},"
                      "'spec':{'unschedulable':false,'podCIDR':'10.0.0.0/24',"
                      "'taints':[{'key':'dedicated','value':'gpu','effect':'NoSchedule'}]},"
                      "'status':{'capacity':{'cpu':'8','memory':'32Gi','pods':110},"
                      "'allocatable':{'cpu':'7500m','memory':'30Gi','pods':'110'},"
                      "'conditions':[{'type':'Ready','status':'True',"
                      "'lastHeartbeatTime':'2024-01-01T00:00:00Z'}],"
                      "'addresses':[{'type':'InternalIP','address':'10.0.0.1'}],"
                      "'nodeInfo':{'kubeletVersion':'v1.34.0','architecture':'amd64',"
                      "'operatingSystem':'linux'},'images':[{'names':['nginx'],"
                      "'sizeBytes':123456789}]}"));

    expect_clean("{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':'web'},"
                 "'spec':{'replicas':3,'serviceName':'web','podManagementPolicy':'Parallel',"
                 "'selector':{'matchLabels':{'app':'web'}},"
                 "'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{'partition':0,"
                 "'maxUnavailable':'25%'}},"
                 "'template':{'metadata':{'labels':{'app':'web'}},'spec':{'containers':"
                 "[{'name':'web','image':'nginx'}]}},"
                 "'volumeClaimTemplates':[{'metadata':{'name':'data'},'spec':{'accessModes':"
                 "['ReadWriteOnce'],'storageClassName':'fast','resources':{'requests':"
                 "{'storage':'1Gi'}}}}]},"
                 "'status':{'replicas':3,'readyReplicas':3}}");

    expect_clean("{'apiVersion':'policy/v1','kind':'PodDisruptionBudget','metadata':{'name':'p'},"
                 "'spec':{'minAvailable':'50%','selector':{'matchLabels':{'app':'web'},"
                 "'matchExpressions':[{'key':'tier','operator':'NotIn','values':['x']}]}},"
                 "'status':{'currentHealthy':2,'desiredHealthy':1,'disruptionsAllowed':1,"
                 "'expectedPods':3}}");
    expect_clean("{'apiVersion':'policy/v1','kind':'PodDisruptionBudget',"
                 "'spec':{'maxUnavailable':1}}");
}

Test(kube_check, null_is_accepted_for_any_field)
{
    expect_clean(POD("'metadata':null,'spec':{'containers':null,'nodeName':null,"
                     "'priority':null,'hostNetwork':null,'overhead':null,"
                     "'nodeSelector':{'a':null},'tolerations':[null]}"));
    expect_clean(CONTAINER("'resources':{'limits':{'cpu':null}},"
                           "'livenessProbe':{'httpGet':{'port':null}}"));
}

Test(kube_check, a_bool_field_refuses_a_string_or_a_number)
{
    expect_one(NODE("'spec':{'unschedulable':'true'}"), KS_KUBE_WRONG_TYPE, "spec.unschedulable",
               "json: cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of "
               "type bool");
    expect_one(POD("'spec':{'hostNetwork':1}"), KS_KUBE_WRONG_TYPE, "spec.hostNetwork",
               "json: cannot unmarshal number into Go struct field PodSpec.spec.hostNetwork of "
               "type bool");
}

Test(kube_check, a_string_field_refuses_other_types)
{
    expect_one(
        CONTAINER("'env':[{'name':'X','value':5}]"), KS_KUBE_WRONG_TYPE,
        "spec.containers[0].env[0].value",
        "json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value "
        "of type string");
    expect_one(POD("'spec':{'restartPolicy':true}"), KS_KUBE_WRONG_TYPE, "spec.restartPolicy",
               "json: cannot unmarshal bool into Go struct field PodSpec.spec.restartPolicy of "
               "type v1.RestartPolicy");
}

Test(kube_check, a_list_needs_an_array_and_its_items_their_type)
{
    expect_one(POD("'spec':{'containers':{}}"), KS_KUBE_WRONG_TYPE, "spec.containers",
               "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type "
               "[]v1.Container");
    expect_one(
        CONTAINER("'command':'sh'"), KS_KUBE_WRONG_TYPE, "spec.containers[0].command",
        "json: cannot unmarshal string into Go struct field Container.spec.containers.command "
        "of type []string");
    expect_one(POD("'spec':{'containers':['x']}"), KS_KUBE_WRONG_TYPE, "spec.containers[0]",
               "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type "
               "v1.Container");
}

Test(kube_check, a_struct_needs_an_object)
{
    expect_one(POD("'spec':'x'"), KS_KUBE_WRONG_TYPE, "spec",
               "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec");
    expect_one(CONTAINER("'livenessProbe':{'httpGet':'x'}"), KS_KUBE_WRONG_TYPE,
               "spec.containers[0].livenessProbe.httpGet",
               "json: cannot unmarshal string into Go struct field "
               "Probe.spec.containers.livenessProbe.ProbeHandler.httpGet of type v1.HTTPGetAction");
}

Test(kube_check, embedded_structs_appear_in_the_decoder_path)
{
    expect_one(
        POD("'metadata':{'name':'x'}, 'kind':5"), KS_KUBE_WRONG_TYPE, "kind",
        "json: cannot unmarshal number into Go struct field Pod.TypeMeta.kind of type string");
}

Test(kube_check, map_values_need_their_type)
{
    found f = check(POD("'metadata':{'labels':{'app':'web','version':1}}"));
    cr_assert_eq(f.n, 1);
    cr_expect_eq(f.p[0].what, KS_KUBE_WRONG_TYPE);
    cr_expect_str_eq(f.p[0].path, "metadata.labels.version");
    cr_expect_str_eq(f.p[0].msg, "json: cannot unmarshal number into Go struct field "
                                 "ObjectMeta.metadata.labels of type string");
    cr_expect_str_eq(f.p[0].key, "version", "the item is the offending value");
    cr_expect_eq(f.p[0].item_type, cJSON_Number);

    expect_one(POD("'spec':{'nodeSelector':{'a':{'x':1}}}"), KS_KUBE_WRONG_TYPE,
               "spec.nodeSelector.a",
               "json: cannot unmarshal object into Go struct field PodSpec.spec.nodeSelector of "
               "type string");
    expect_one(CONTAINER("'resources':{'limits':[]}"), KS_KUBE_WRONG_TYPE,
               "spec.containers[0].resources.limits",
               "json: cannot unmarshal array into Go struct field "
               "ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList");
}

Test(kube_check, an_integer_field_needs_an_integral_number)
{
    expect_one(POD("'spec':{'activeDeadlineSeconds':1.5}"), KS_KUBE_OUT_OF_RANGE,
               "spec.activeDeadlineSeconds",
               "json: cannot unmarshal number 1.5 into Go struct field "
               "PodSpec.spec.activeDeadlineSeconds of type int64");
    expect_one(POD("'spec':{'activeDeadlineSeconds':'5'}"), KS_KUBE_WRONG_TYPE,
               "spec.activeDeadlineSeconds",
               "json: cannot unmarshal string into Go struct field "
               "PodSpec.spec.activeDeadlineSeconds of type int64");
    expect_one("{'apiVersion':'apps/v1','kind':'StatefulSet','spec':{'replicas':'3'}}",
               KS_KUBE_WRONG_TYPE, "spec.replicas",
               "json: cannot unmarshal string into Go struct field StatefulSetSpec.spec.replicas "
               "of type int32");
}

Test(kube_check, an_integer_field_needs_a_number_within_its_width)
{
    expect_one(CONTAINER("'ports':[{'containerPort':80,'hostPort':3000000000}]"),
               KS_KUBE_OUT_OF_RANGE, "spec.containers[0].ports[0].hostPort",
               "json: cannot unmarshal number 3000000000 into Go struct field "
               "ContainerPort.spec.containers.ports.hostPort of type int32");
    expect_one(POD("'spec':{'priority':-2147483649}"), KS_KUBE_OUT_OF_RANGE, "spec.priority",
               "json: cannot unmarshal number -2147483649 into Go struct field "
               "PodSpec.spec.priority of type int32");
    /* The bounds themselves fit, and int64 holds what int32 does not. */
    expect_clean(POD("'spec':{'priority':2147483647,'activeDeadlineSeconds':3000000000}"));
    expect_clean(POD("'spec':{'priority':-2147483648}"));
}

Test(kube_check, a_quantity_is_a_string_or_a_number)
{
    expect_clean(CONTAINER("'resources':{'limits':{'cpu':1,'memory':'1Gi'},"
                           "'requests':{'cpu':0.5}}"));
    expect_one(CONTAINER("'resources':{'limits':{'cpu':true}}"), KS_KUBE_WRONG_TYPE,
               "spec.containers[0].resources.limits.cpu",
               "json: cannot unmarshal bool into Go struct field "
               "ResourceRequirements.spec.containers.resources.limits of type resource.Quantity");
    expect_one(POD("'spec':{'overhead':{'cpu':{}}}"), KS_KUBE_WRONG_TYPE, "spec.overhead.cpu",
               "json: cannot unmarshal object into Go struct field PodSpec.spec.overhead of type "
               "resource.Quantity");
}

Test(kube_check, an_int_or_string_is_an_int32_or_a_string)
{
    expect_clean(CONTAINER("'livenessProbe':{'httpGet':{'port':'http'}},"
                           "'readinessProbe':{'httpGet':{'port':8080}}"));
    expect_one(
        CONTAINER("'livenessProbe':{'httpGet':{'port':true}}"), KS_KUBE_WRONG_TYPE,
        "spec.containers[0].livenessProbe.httpGet.port",
        "json: cannot unmarshal bool into Go struct field "
        "HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port of type int32");
    expect_one(
        CONTAINER("'livenessProbe':{'httpGet':{'port':1.5}}"), KS_KUBE_OUT_OF_RANGE,
        "spec.containers[0].livenessProbe.httpGet.port",
        "json: cannot unmarshal number 1.5 into Go struct field "
        "HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port of type int32");
    expect_one(
        CONTAINER("'livenessProbe':{'httpGet':{'port':3000000000}}"), KS_KUBE_OUT_OF_RANGE,
        "spec.containers[0].livenessProbe.httpGet.port",
        "json: cannot unmarshal number 3000000000 into Go struct field "
        "HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port of type int32");
}

Test(kube_check, a_time_is_a_string)
{
    expect_one(POD("'metadata':{'creationTimestamp':5}"), KS_KUBE_WRONG_TYPE,
               "metadata.creationTimestamp",
               "json: cannot unmarshal number into Go struct field "
               "ObjectMeta.metadata.creationTimestamp of type string");
}

Test(kube_check, raw_fields_take_any_json)
{
    expect_clean(POD("'metadata':{'managedFields':[{'fieldsV1':[1,'x',{'y':true}]}]}"));
    expect_clean("{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass','spec':{'config':"
                 "[{'opaque':{'driver':'d','parameters':{'anything':[1,{'goes':true}]}}}]}}");
}

Test(kube_check, unknown_fields_at_every_depth)
{
    found f = check(POD("'foo':1,'spec':{'containers':[{'name':'a','resoures':{}}]},"
                        "'metadata':{'nmae':'x'}"));
    cr_assert_eq(f.n, 3);
    cr_expect_eq(f.p[0].what, KS_KUBE_UNKNOWN_FIELD);
    cr_expect_str_eq(f.p[0].path, "foo");
    cr_expect_str_eq(f.p[0].msg, "unknown field \"foo\"");
    cr_expect_str_eq(f.p[0].key, "foo", "the item is the unknown field's value");
    cr_expect_str_eq(f.p[1].path, "spec.containers[0].resoures");
    cr_expect_str_eq(f.p[1].msg, "unknown field \"spec.containers[0].resoures\"");
    cr_expect_eq(f.p[1].item_type, cJSON_Object);
    cr_expect_str_eq(f.p[2].msg, "unknown field \"metadata.nmae\"");

    expect_one(NODE("'status':{'capacity':{'cpu':'4'},'allocateable':{'cpu':'4'}}"),
               KS_KUBE_UNKNOWN_FIELD, "status.allocateable",
               "unknown field \"status.allocateable\"");
    expect_one(POD("'Spec':{}"), KS_KUBE_UNKNOWN_FIELD, "Spec", "unknown field \"Spec\"");
    expect_one(POD("'metadata':{'ownerReferences':[{'kind':'a','foo':1}]}"), KS_KUBE_UNKNOWN_FIELD,
               "metadata.ownerReferences[0].foo",
               "unknown field \"metadata.ownerReferences[0].foo\"");
    expect_one(POD("'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuring"
                   "Execution':{'nodeSelectorTerms':[{},{'matchExpressions':[{'key':'a',"
                   "'bad':1}]}]}}}}"),
               KS_KUBE_UNKNOWN_FIELD,
               "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
               "nodeSelectorTerms[1].matchExpressions[0].bad",
               "unknown field \"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
               "Execution.nodeSelectorTerms[1].matchExpressions[0].bad\"");
}

Test(kube_check, unknown_field_paths_are_quoted_as_go_does)
{
    expect_one(POD("'a\\'b':1"), KS_KUBE_UNKNOWN_FIELD, "a\"b", "unknown field \"a\\\"b\"");
    expect_one(POD("'tab\\there':1"), KS_KUBE_UNKNOWN_FIELD, "tab\there",
               "unknown field \"tab\\there\"");
    /* Printable runes stay; a no-break space (pasted from a web page) and a byte that is no
     * UTF-8 are escaped, so that the message shows what differs from the field's name. */
    expect_one(POD("'caf\xc3\xa9':1"), KS_KUBE_UNKNOWN_FIELD, "caf\xc3\xa9",
               "unknown field \"caf\xc3\xa9\"");
    expect_one(POD("'spec':{'nodeName\\u00a0':'n1'}"), KS_KUBE_UNKNOWN_FIELD,
               "spec.nodeName\xc2\xa0", "unknown field \"spec.nodeName\\u00a0\"");
    expect_one(POD("'a\xff':1"), KS_KUBE_UNKNOWN_FIELD, "a\xff", "unknown field \"a\\xff\"");
    expect_one(POD("'\xf0\x9f\x98\x80\\ue000':1"), KS_KUBE_UNKNOWN_FIELD,
               "\xf0\x9f\x98\x80\xee\x80\x80", "unknown field \"\xf0\x9f\x98\x80\\ue000\"");
}

Test(kube_check, every_problem_is_reported)
{
    found f = check(POD("'spec':{'hostNetwork':'yes','priority':1.5,'containers':[{'name':1},"
                        "{'name':'b','imagee':'x'}]}"));
    cr_assert_eq(f.n, 4);
    cr_expect_str_eq(f.p[0].path, "spec.hostNetwork");
    cr_expect_str_eq(f.p[1].path, "spec.priority");
    cr_expect_eq(f.p[1].what, KS_KUBE_OUT_OF_RANGE);
    cr_expect_str_eq(f.p[2].msg, "json: cannot unmarshal number into Go struct field "
                                 "Container.spec.containers.name of type string");
    cr_expect_str_eq(f.p[2].path, "spec.containers[0].name");
    cr_expect_str_eq(f.p[3].msg, "unknown field \"spec.containers[1].imagee\"");
}

Test(kube_check, very_long_paths_are_cut_short)
{
    /* A key far longer than the path buffer, unknown, and as a map key with a wrong value. */
    char key[3001], json[7000];
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    snprintf(json, sizeof(json), POD("'%s':1,'metadata':{'labels':{'%s':1}},'spec':{'x':1}"), key,
             key);
    found f = check(json);
    cr_assert_eq(f.n, 3);
    cr_expect_eq(f.p[0].what, KS_KUBE_UNKNOWN_FIELD);
    cr_expect_lt(f.p[0].path_len, 1024);
    cr_expect_eq(f.p[1].what, KS_KUBE_WRONG_TYPE);
    cr_expect_lt(f.p[1].path_len, 1024);
    cr_expect_eq(strncmp(f.p[1].path, "metadata.labels.kkk", 19), 0);
    cr_expect_str_eq(f.p[2].path, "spec.x", "the paths come back after a long one");
}

Test(kube_check, kinds_without_a_schema_are_not_checked)
{
    cr_expect_eq(check("{'apiVersion':'v1','kind':'ConfigMap','data':{'a':1},'foo':2}").n, 0);
    cr_expect_eq(check("{'apiVersion':'example.com/v1','kind':'Foo','spec':'x'}").n, 0);
    cr_expect_eq(check("{'kind':'Pod','spec':'x'}").n, 0);
}

Test(kube_check, other_checked_kinds_are_held_to_their_schema)
{
    expect_one("{'apiVersion':'storage.k8s.io/v1','kind':'CSINode','spec':{'drivers':[{'name':"
               "'d','nodeID':'n','allocatable':{'count':'2'}}]}}",
               KS_KUBE_WRONG_TYPE, "spec.drivers[0].allocatable.count",
               "json: cannot unmarshal string into Go struct field "
               "VolumeNodeResources.spec.drivers.allocatable.count of type int32");
    expect_one("{'apiVersion':'scheduling.k8s.io/v1','kind':'PriorityClass','value':1000,"
               "'globalDefault':'no'}",
               KS_KUBE_WRONG_TYPE, "globalDefault",
               "json: cannot unmarshal string into Go struct field PriorityClass.globalDefault of "
               "type bool");
}
