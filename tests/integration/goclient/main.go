// A varlink client that is not ours (varlink/go) calls timerd and checks its replies.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/varlink/go/varlink"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

// Every number in v is an integer a signed 64-bit int holds (the IDL's int).
func checkInts(path string, v interface{}) {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err != nil {
			fail("%s = %s is not an int64", path, x)
		}
	case map[string]interface{}:
		for k, e := range x {
			checkInts(path+"."+k, e)
		}
	case []interface{}:
		for i, e := range x {
			checkInts(fmt.Sprintf("%s[%d]", path, i), e)
		}
	}
}

// Values beyond the IDL's int, and sums that would leave it, are refused with the field named;
// then root's List of everything holds only ints a varlink client can read.
func checkIntRange(ctx context.Context, c *varlink.Connection) {
	refused := []struct{ params, err, field string }{
		{`{"name":"big","declaration":{"policy":"interval","cadence_usec":9223372036854775808}}`,
			"org.varlink.service.InvalidParameter", "declaration.cadence_usec"},
		{`{"name":"big","declaration":{"policy":"interval","cadence_usec":18446744073709551616}}`,
			"org.varlink.service.InvalidParameter", "declaration.cadence_usec"},
		{`{"name":"big","delay_usec":9223372036854775000,"declaration":{"policy":"once"}}`,
			"io.timerd.Timer.Overflow", "delay_usec"},
		{`{"name":"big","declaration":{"policy":"interval","cadence_usec":9223372036854775807}}`,
			"io.timerd.Timer.Overflow", "declaration.cadence_usec"},
		{`{"name":"big","start_usec":9223372036854775000,"declaration":{"policy":"interval","cadence_usec":1000000}}`,
			"io.timerd.Timer.Overflow", "declaration.cadence_usec"},
	}
	for _, r := range refused {
		err := c.Call(ctx, "io.timerd.Timer.Register", json.RawMessage(r.params), nil)
		name, named := "", ""
		switch e := err.(type) {
		case *varlink.InvalidParameter:
			name, named = "org.varlink.service.InvalidParameter", e.Parameter
		case *varlink.Error:
			var what struct {
				What string `json:"what"`
			}
			if raw, ok := e.Parameters.(*json.RawMessage); ok && raw != nil {
				_ = json.Unmarshal(*raw, &what)
			}
			name, named = e.Name, what.What
		}
		if name != r.err || named != r.field {
			fail("Register %s: want %s naming %s, got %v", r.params, r.err, r.field, err)
		}
	}
	// The largest values that are accepted.
	accepted := []string{
		`{"name":"edge-once","start_usec":9223372036854775807,"declaration":{"policy":"once","lifetime":"retained"}}`,
		`{"name":"edge-interval","start_usec":4611686018427387903,"declaration":{"policy":"interval","cadence_usec":4611686018427387904}}`,
	}
	for _, params := range accepted {
		if err := c.Call(ctx, "io.timerd.Timer.Register", json.RawMessage(params), nil); err != nil {
			fail("Register %s: %v", params, err)
		}
	}
	var raw json.RawMessage
	if err := c.Call(ctx, "io.timerd.Timer.List", map[string]interface{}{"all": true}, &raw); err != nil {
		fail("List all: %v", err)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var list map[string]interface{}
	if err := d.Decode(&list); err != nil {
		fail("List all: %v", err)
	}
	checkInts("List", list)
	if timers, _ := list["timers"].([]interface{}); len(timers) != 3 {
		fail("List all: %d timers, want 3", len(timers))
	}
}

func main() {
	ctx := context.Background()
	c, err := varlink.NewConnection(ctx, "unix:"+os.Args[1])
	if err != nil {
		fail("connect: %v", err)
	}
	defer c.Close()

	var vendor, product, version, url string
	var interfaces []string
	if err := c.GetInfo(ctx, &vendor, &product, &version, &url, &interfaces); err != nil {
		fail("GetInfo: %v", err)
	}
	joined := strings.Join(interfaces, ",")
	if !strings.Contains(joined, "io.timerd.Timer") || !strings.Contains(joined, "io.timerd.Service") {
		fail("GetInfo interfaces: %v", interfaces)
	}
	// The descriptions are checked against varlink/go's parser by tests/varlink/idl-check.sh.
	for _, iface := range interfaces {
		desc, err := c.GetInterfaceDescription(ctx, iface)
		if err != nil || !strings.Contains(desc, "interface "+iface) {
			fail("GetInterfaceDescription %s: %v", iface, err)
		}
	}

	type claim struct {
		Name       string `json:"name"`
		Generation int64  `json:"generation"`
	}
	var reg struct {
		Claim claim `json:"claim"`
	}
	params := map[string]interface{}{
		"name":        "from-go",
		"declaration": map[string]interface{}{"policy": "interval", "cadence_usec": 60000000},
	}
	if err := c.Call(ctx, "io.timerd.Timer.Register", params, &reg); err != nil {
		fail("Register: %v", err)
	}
	if reg.Claim.Name != "from-go" || reg.Claim.Generation < 1 {
		fail("Register claim: %+v", reg.Claim)
	}

	var list struct {
		Timers []struct {
			Name        string `json:"name"`
			State       string `json:"state"`
			Declaration struct {
				Policy string `json:"policy"`
			} `json:"declaration"`
		} `json:"timers"`
	}
	if err := c.Call(ctx, "io.timerd.Timer.List", nil, &list); err != nil {
		fail("List: %v", err)
	}
	if len(list.Timers) != 1 || list.Timers[0].Name != "from-go" ||
		list.Timers[0].Declaration.Policy != "interval" || list.Timers[0].State != "scheduled" {
		fail("List: %+v", list.Timers)
	}

	err = c.Call(ctx, "io.timerd.Timer.Get", map[string]interface{}{"name": "nope"}, nil)
	if verr, ok := err.(*varlink.Error); !ok || verr.Name != "io.timerd.Timer.NotFound" {
		fail("Get of a missing timer: %v", err)
	}
	checkIntRange(ctx, c)
	fmt.Println("varlink/go client: all checks passed")
}
