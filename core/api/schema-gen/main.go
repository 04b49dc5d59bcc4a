// Command schema-gen writes core/api/kube_schema.c: the field schema of the Kubernetes kinds
// kubesched reads from cluster files, and the list of every built-in (apiVersion, kind), taken by
// reflection from the Go types of k8s.io/api (the version go.mod names).
//
// Usage: cd core/api/schema-gen && GOFLAGS=-mod=mod go run . > ../kube_schema.c
//
// The schema mirrors what the kube-apiserver's strict JSON decoding (sigs.k8s.io/json, a fork of
// encoding/json) accepts for each Go type: the JSON field names come from the json tags, embedded
// structs are flattened with encoding/json's dominance rules, pointers are looked through (the
// decoder allocates them), and types with their own UnmarshalJSON are described by the JSON they
// accept (customTypes). The tables are laid out as core/api/kube_schema.h declares them.
package main

import (
	"encoding"
	"encoding/json"
	"log"
	"os"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// checkedKinds are the kinds kubesched reads from a cluster file: each gets a full schema.
var checkedKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "Node"},
	{Version: "v1", Kind: "Namespace"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ReplicationController"},
	{Version: "v1", Kind: "PersistentVolume"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"},
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSINode"},
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver"},
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity"},
	{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttachment"},
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaim"},
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceSlice"},
	{Group: "resource.k8s.io", Version: "v1", Kind: "DeviceClass"},
	{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaimTemplate"},
	{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"},
}

// customTypes: the types reached from checkedKinds that decode themselves (UnmarshalJSON), by
// package path and name: the kind of JSON their UnmarshalJSON accepts, and the Go type upstream's
// message names when given another one (their UnmarshalJSON decodes into a field of that type, and
// the decoder adds the field's context to that error); "" names the type itself. A new one fails
// the generator so that someone decides what it accepts.
type custom struct{ kind, errType string }

var customTypes = map[string]custom{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":                 {"KS_KUBE_T_QUANTITY", ""},           // "1Gi" or 1
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString":               {"KS_KUBE_T_INT_OR_STRING", "int32"}, // "http" or 80
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":                     {"KS_KUBE_T_TEXT", "string"},         // RFC 3339
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":                {"KS_KUBE_T_TEXT", "string"},         // RFC 3339
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":                 {"KS_KUBE_T_TEXT", "string"},         // "5m"
	"k8s.io/apimachinery/pkg/runtime.RawExtension":                  {"KS_KUBE_T_ANY", ""},                // any JSON, kept raw
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":                 {"KS_KUBE_T_ANY", ""},                // any JSON, kept raw
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON": {"KS_KUBE_T_ANY", ""},                // any JSON
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// One entry of each table, as kube_schema.h lays them out.
type typeEntry struct {
	kind   string // a ks_kube_type_kind enumerator
	name   string // the Go type upstream's messages name: as reflect prints it ("[]v1.Container"), or customTypes' errType
	ref    int    // slice/map: the element's type; struct: its index in structs
	goType string // as reflect prints it, for the generated file's comments
}

type fieldEntry struct {
	json   string // the JSON key
	errSeg string // what the decoder's error path adds: the key, after the Go names of the embedded structs it comes through ("TypeMeta.kind")
	typ    int
}

type structEntry struct {
	name   string // the Go type's bare name ("PodSpec"), as upstream's messages print it
	fields []fieldEntry
}

type generator struct {
	types      []typeEntry
	typeIndex  map[reflect.Type]int
	structs    []structEntry
	strs       []string
	strOffsets map[string]int
	strLen     int
}

func main() {
	g := &generator{typeIndex: map[reflect.Type]int{}, strOffsets: map[string]int{}}
	known := scheme.Scheme.AllKnownTypes()
	roots := map[string]int{}
	for _, gvk := range checkedKinds {
		t, ok := known[gvk]
		if !ok {
			log.Fatalf("schema-gen: %v is not a built-in kind", gvk)
		}
		roots[gvk.String()] = g.typeOf(t)
	}
	g.write(os.Stdout, kindRows(known, roots))
}

// typeOf returns the index of t's entry, adding it (and everything it reaches) on first sight.
// Pointers are looked through: the decoder allocates them, and its messages name the pointee.
func (g *generator) typeOf(t reflect.Type) int {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if i, ok := g.typeIndex[t]; ok {
		return i
	}
	i := len(g.types)
	g.types = append(g.types, typeEntry{name: t.String(), goType: t.String()})
	g.typeIndex[t] = i
	kind, ref := g.describe(t)
	g.types[i].kind, g.types[i].ref = kind, ref
	return i
}

func (g *generator) describe(t reflect.Type) (string, int) {
	if c, ok := customKind(t); ok {
		if c.errType != "" {
			g.types[g.typeIndex[t]].name = c.errType
		}
		return c.kind, 0
	}
	switch t.Kind() {
	case reflect.String:
		return "KS_KUBE_T_STRING", 0
	case reflect.Bool:
		return "KS_KUBE_T_BOOL", 0
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint8, reflect.Uint16,
		reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "KS_KUBE_T_" + strings.ToUpper(t.Kind().String()), 0
	case reflect.Int: // 64 bits on every platform the apiserver is built for
		return "KS_KUBE_T_INT64", 0
	case reflect.Uint:
		return "KS_KUBE_T_UINT64", 0
	case reflect.Interface:
		return "KS_KUBE_T_ANY", 0
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "KS_KUBE_T_BYTES", 0 // encoding/json: base64 in a string
		}
		return "KS_KUBE_T_SLICE", g.typeOf(t.Elem())
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			log.Fatalf("schema-gen: %v: map keys other than strings are not described", t)
		}
		return "KS_KUBE_T_MAP", g.typeOf(t.Elem())
	case reflect.Struct:
		return "KS_KUBE_T_STRUCT", g.structOf(t)
	}
	log.Fatalf("schema-gen: %v: a %v is not described", t, t.Kind())
	return "", 0
}

// customKind says what JSON a type with its own decoding accepts (customTypes).
func customKind(t reflect.Type) (custom, bool) {
	pt := reflect.PointerTo(t)
	if !pt.Implements(unmarshalerType) {
		if pt.Implements(textUnmarshalerType) {
			log.Fatalf("schema-gen: %v decodes JSON strings with UnmarshalText: add it to customTypes", t)
		}
		return custom{}, false
	}
	c, ok := customTypes[t.PkgPath()+"."+t.Name()]
	if !ok {
		log.Fatalf("schema-gen: %v has its own UnmarshalJSON: add what JSON it accepts to customTypes", t)
	}
	return c, true
}

func (g *generator) structOf(t reflect.Type) int {
	i := len(g.structs)
	g.structs = append(g.structs, structEntry{name: t.Name()})
	var fields []fieldEntry
	for _, f := range jsonFields(t) {
		fields = append(fields, fieldEntry{json: f.name, errSeg: f.errSeg, typ: g.typeOf(f.typ)})
	}
	sort.Slice(fields, func(a, b int) bool { return fields[a].json < fields[b].json })
	g.structs[i].fields = fields
	return i
}

// A candidate JSON field of a struct, before encoding/json's dominance rules pick one per name.
type candidate struct {
	name   string
	errSeg string
	typ    reflect.Type
	depth  int
	tagged bool
}

// jsonFields lists the fields encoding/json decodes into t: exported fields by their json tag
// name (or Go name), the fields of embedded structs without a tag name promoted, and, where a
// name is met more than once, the shallowest one (at equal depth the only tagged one, else none).
func jsonFields(t reflect.Type) []candidate {
	var all []candidate
	collect(t, "", 0, map[reflect.Type]bool{}, &all)
	byName := map[string][]candidate{}
	var names []string
	for _, c := range all {
		if _, seen := byName[c.name]; !seen {
			names = append(names, c.name)
		}
		byName[c.name] = append(byName[c.name], c)
	}
	var out []candidate
	for _, n := range names {
		if c, ok := dominant(byName[n]); ok {
			out = append(out, c)
		}
	}
	return out
}

func collect(t reflect.Type, prefix string, depth int, visiting map[reflect.Type]bool, out *[]candidate) {
	if visiting[t] {
		return
	}
	visiting[t] = true
	defer delete(visiting, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") {
			log.Fatalf("schema-gen: %v.%s: the ,string option is not described", t, f.Name)
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			collect(ft, prefix+f.Name+".", depth+1, visiting, out)
			continue
		}
		if !f.IsExported() {
			continue
		}
		tagged := name != ""
		if !tagged {
			name = f.Name
		}
		*out = append(*out, candidate{name: name, errSeg: prefix + name, typ: f.Type, depth: depth, tagged: tagged})
	}
}

func dominant(cs []candidate) (candidate, bool) {
	min := cs[0].depth
	for _, c := range cs {
		if c.depth < min {
			min = c.depth
		}
	}
	var top, tagged []candidate
	for _, c := range cs {
		if c.depth == min {
			top = append(top, c)
			if c.tagged {
				tagged = append(tagged, c)
			}
		}
	}
	switch {
	case len(top) == 1:
		return top[0], true
	case len(tagged) == 1:
		return tagged[0], true
	}
	return candidate{}, false
}

// A row of the kind list: every built-in (apiVersion, kind), with its schema where it has one.
type kindRow struct {
	apiVersion, kind string
	typ              int // -1: no schema
}

func kindRows(known map[schema.GroupVersionKind]reflect.Type, roots map[string]int) []kindRow {
	var rows []kindRow
	for gvk := range known {
		if gvk.Version == "__internal" {
			continue
		}
		typ, ok := roots[gvk.String()]
		if !ok {
			typ = -1
		}
		rows = append(rows, kindRow{gvk.GroupVersion().String(), gvk.Kind, typ})
	}
	sort.Slice(rows, func(a, b int) bool {
		if rows[a].apiVersion != rows[b].apiVersion {
			return rows[a].apiVersion < rows[b].apiVersion
		}
		return rows[a].kind < rows[b].kind
	})
	return rows
}
