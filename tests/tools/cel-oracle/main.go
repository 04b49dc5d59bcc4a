// cel-oracle evaluates DRA device selectors with upstream's own code
// (k8s.io/dynamic-resource-allocation/cel at the version Kubernetes v1.37.2 uses), for the
// differential test of core/cel (tests/cel/difffuzz.c, docs/CEL.md). Test-only.
//
// Input: one JSON object per line on stdin:
//
//	{"expr": "...", "driver": "...", "allowMultipleAllocations": true,
//	 "attributes": {"name": {"int": 1} | {"bool": true} | {"string": "s"} | {"version": "1.0.0"} |
//	                {"ints": [..]} | {"bools": [..]} | {"strings": [..]} | {"versions": [..]}},
//	 "capacity": {"name": "80Gi"}}
//
// Output: one JSON object per line: {"compileError": "..."} or {"match": b, "cost": n} or
// {"error": "...", "cost": n}.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

type attr struct {
	Int      *int64   `json:"int,omitempty"`
	Bool     *bool    `json:"bool,omitempty"`
	String   *string  `json:"string,omitempty"`
	Version  *string  `json:"version,omitempty"`
	Ints     []int64  `json:"ints,omitempty"`
	Bools    []bool   `json:"bools,omitempty"`
	Strings  []string `json:"strings,omitempty"`
	Versions []string `json:"versions,omitempty"`
}

type request struct {
	Expr       string            `json:"expr"`
	Driver     string            `json:"driver"`
	AllowMulti *bool             `json:"allowMultipleAllocations,omitempty"`
	Attributes map[string]attr   `json:"attributes"`
	Capacity   map[string]string `json:"capacity"`
}

type reply struct {
	CompileError *string `json:"compileError,omitempty"`
	Match        *bool   `json:"match,omitempty"`
	Error        *string `json:"error,omitempty"`
	Cost         *uint64 `json:"cost,omitempty"`
}

func main() {
	compiler := dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true, EnableListTypeAttributes: true})
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		var rep reply
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "cel-oracle: bad request:", err)
			os.Exit(2)
		}
		res := compiler.CompileCELExpression(req.Expr, dracel.Options{})
		if res.Error != nil {
			msg := res.Error.Error()
			rep.CompileError = &msg
		} else {
			dev := dracel.Device{Driver: req.Driver, AllowMultipleAllocations: req.AllowMulti,
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{},
				Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}}
			for n, a := range req.Attributes {
				dev.Attributes[resourceapi.QualifiedName(n)] = resourceapi.DeviceAttribute{IntValue: a.Int,
					BoolValue: a.Bool, StringValue: a.String, VersionValue: a.Version, IntValues: a.Ints,
					BoolValues: a.Bools, StringValues: a.Strings, VersionValues: a.Versions}
			}
			for n, q := range req.Capacity {
				dev.Capacity[resourceapi.QualifiedName(n)] = resourceapi.DeviceCapacity{Value: resource.MustParse(q)}
			}
			match, details, err := res.DeviceMatches(context.Background(), dev)
			if details != nil && details.ActualCost() != nil {
				c := *details.ActualCost()
				rep.Cost = &c
			}
			if err != nil {
				msg := err.Error()
				rep.Error = &msg
			} else {
				rep.Match = &match
			}
		}
		if err := enc.Encode(&rep); err != nil {
			os.Exit(2)
		}
		out.Flush()
	}
}
