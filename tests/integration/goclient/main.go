// A varlink client that is not ours (varlink/go) calls timerd and checks its replies.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/varlink/go/varlink"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
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
	fmt.Println("varlink/go client: all checks passed")
}
