// dra-alloc-oracle runs upstream's structured allocator (k8s.io/dynamic-resource-allocation
// v0.37.2 structured.NewAllocator, pinned to the "incubating" implementation that v1.37.2's
// default features select) on cases from stdin, for the differential test of core/sched/dra_allocator
// (tests/tools/dra-alloc-oracle/difffuzz.c). Test-only.
//
// Input: one JSON object per line:
//
//	{"features": {"AdminAccess": true, ...}, "node": <v1.Node>, "slices": [<ResourceSlice>...],
//	 "classes": [<DeviceClass>...], "claims": [<ResourceClaim>...],
//	 "allocated": ["driver/pool/device", ...], "shared": ["driver/pool/device", ...],
//	 "capacity": [{"device": "driver/pool/device", "name": "capacity-0", "value": "2"}]}
//
// Output: one line per case, the outcome rendered as difffuzz.c renders its own:
//
//	ERR <error> | NODEERR <error> | NONE | OK <claim>; <claim>... | TIMEOUT (past 2 s)
//
// where a claim is "[req:driver/pool/device+admin+share{cap=amount}+tol(key)+bc(c)+bfc(c) ...]
// @<node selector> {class|claim:<requests>|*:<parameters> ...}" (difffuzz.c: render()).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"gopkg.in/inf.v0"
)

type capacityEntry struct {
	Device string            `json:"device"`
	Name   string            `json:"name"`
	Value  resource.Quantity `json:"value"`
}

type testCase struct {
	Features  structured.Features          `json:"features"`
	Node      *v1.Node                     `json:"node"`
	Slices    []*resourceapi.ResourceSlice `json:"slices"`
	Classes   []*resourceapi.DeviceClass   `json:"classes"`
	Claims    []*resourceapi.ResourceClaim `json:"claims"`
	Allocated []string                     `json:"allocated"`
	Shared    []string                     `json:"shared"`
	Capacity  []capacityEntry              `json:"capacity"`
}

type classLister []*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) { return l, nil }
func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	for _, c := range l {
		if c.Name == name {
			return c, nil
		}
	}
	// The informer lister's NotFound (what the DynamicResources plugin hands the allocator).
	return nil, fmt.Errorf("deviceclass.resource.k8s.io %q not found", name)
}

func deviceID(s string) structured.DeviceID {
	parts := strings.Split(s, "/")
	return structured.MakeDeviceID(parts[0], strings.Join(parts[1:len(parts)-1], "/"), parts[len(parts)-1])
}

// exact renders a quantity as its exact amount: whole units, or milli-units with "m"
// (rounded up below a milli, as MilliValue), matching dra_allocator.c's qv_text.
func exact(q resource.Quantity) string {
	d := q.AsDec()
	milli := new(inf.Dec).Mul(d, inf.NewDec(1000, 0))
	r := new(inf.Dec).Round(milli, 0, inf.RoundCeil)
	b := r.UnscaledBig()
	if r.Scale() < 0 {
		b = new(big.Int).Mul(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-r.Scale())), nil))
	}
	rem := new(big.Int)
	quo, rem := new(big.Int).QuoRem(b, big.NewInt(1000), rem)
	if rem.Sign() == 0 {
		return quo.String()
	}
	return b.String() + "m"
}

func renderReqs(reqs []v1.NodeSelectorRequirement) string {
	var parts []string
	for _, r := range reqs {
		s := r.Key + " " + string(r.Operator)
		for i, v := range r.Values {
			if i == 0 {
				s += " "
			} else {
				s += "|"
			}
			s += v
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

func render(results []resourceapi.AllocationResult) string {
	var claims []string
	for _, r := range results {
		var devs []string
		for _, d := range r.Devices.Results {
			s := fmt.Sprintf("%s:%s/%s/%s", d.Request, d.Driver, d.Pool, d.Device)
			if d.AdminAccess != nil && *d.AdminAccess {
				s += "+admin"
			}
			if d.ShareID != nil {
				s += "+share"
			}
			if len(d.ConsumedCapacity) > 0 {
				var names []string
				for n := range d.ConsumedCapacity {
					names = append(names, string(n))
				}
				sort.Strings(names)
				var kv []string
				for _, n := range names {
					kv = append(kv, n+"="+exact(d.ConsumedCapacity[resourceapi.QualifiedName(n)]))
				}
				s += "{" + strings.Join(kv, ",") + "}"
			}
			for _, t := range d.Tolerations {
				s += "+tol(" + t.Key + ")"
			}
			for _, c := range d.BindingConditions {
				s += "+bc(" + c + ")"
			}
			for _, c := range d.BindingFailureConditions {
				s += "+bfc(" + c + ")"
			}
			devs = append(devs, s)
		}
		s := "[" + strings.Join(devs, " ") + "] @"
		switch {
		case r.NodeSelector == nil:
			s += "any"
		default:
			t := r.NodeSelector.NodeSelectorTerms[0]
			if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 1 && t.MatchFields[0].Key == "metadata.name" && len(t.MatchFields[0].Values) == 1 {
				s += t.MatchFields[0].Values[0]
			} else {
				if len(t.MatchExpressions) > 0 {
					s += "E(" + renderReqs(t.MatchExpressions) + ")"
				}
				if len(t.MatchFields) > 0 {
					s += "F(" + renderReqs(t.MatchFields) + ")"
				}
			}
		}
		for i, c := range r.Devices.Config {
			if i == 0 {
				s += " {"
			} else {
				s += " "
			}
			if c.Source == resourceapi.AllocationConfigSourceClass {
				s += "class:"
			} else {
				s += "claim:"
			}
			if len(c.Requests) == 0 {
				s += "*"
			}
			s += strings.Join(c.Requests, ",")
			s += ":"
			if c.Opaque != nil {
				s += string(c.Opaque.Parameters.Raw)
			}
		}
		if len(r.Devices.Config) > 0 {
			s += "}"
		}
		claims = append(claims, s)
	}
	return strings.Join(claims, "; ")
}

func run(tc *testCase) string {
	// Some random cases make the exhaustive search explode (upstream bounds it with the
	// plugin's filterTimeout); those are reported as TIMEOUT and not compared.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, d := range tc.Allocated {
		state.AllocatedDevices.Insert(deviceID(d))
	}
	for i, d := range tc.Shared {
		uid := types.UID(fmt.Sprintf("share-%d", i))
		state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(deviceID(d), &uid))
	}
	for _, c := range tc.Capacity {
		state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(deviceID(c.Device),
			map[resourceapi.QualifiedName]resource.Quantity{resourceapi.QualifiedName(c.Name): c.Value}))
	}
	celCache := cel.NewCache(10, cel.Features{EnableConsumableCapacity: tc.Features.ConsumableCapacity, EnableListTypeAttributes: tc.Features.ListTypeAttributes})
	alloc, err := structured.NewAllocator(ctx, tc.Features, state, classLister(tc.Classes), tc.Slices, celCache)
	if err != nil {
		return "ERR " + err.Error()
	}
	results, err := alloc.Allocate(ctx, tc.Node, tc.Claims)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		return "TIMEOUT"
	}
	if err != nil {
		if errors.Is(err, structured.ErrFailedAllocationOnNode) {
			return "NODEERR " + err.Error()
		}
		return "ERR " + err.Error()
	}
	if results == nil {
		return "NONE"
	}
	return "OK " + render(results)
}

func main() {
	// The C allocator is a port of the "incubating" implementation, the one v1.37.2's default
	// features select; pin it so that cases with other feature sets compare against it too
	// (without this, NewAllocator picks "stable" when the features allow).
	structured.EnableAllocators("incubating")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var tc testCase
		var line string
		if err := json.Unmarshal(in.Bytes(), &tc); err != nil {
			line = "BADINPUT " + err.Error()
		} else {
			line = func() (s string) {
				defer func() {
					if r := recover(); r != nil {
						s = fmt.Sprintf("PANIC %v", r)
					}
				}()
				return run(&tc)
			}()
		}
		fmt.Fprintln(out, strings.ReplaceAll(line, "\n", "\\n"))
		out.Flush()
	}
}
