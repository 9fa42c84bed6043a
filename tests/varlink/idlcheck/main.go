// SPDX-License-Identifier: LGPL-2.1-or-later

// idlcheck parses varlink interface files with the varlink/go IDL parser and exits non-zero
// naming the first file that does not parse.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/varlink/go/varlink/idl"
)

var interfaceLine = regexp.MustCompile(`(?m)^interface[ \t]+(\S+)[ \t]*$`)

// The interface name grammar of https://varlink.org/Interface-Definition, which has allowed
// uppercase letters since December 2021 (varlink/go#29, libvarlink#48).
var interfaceName = regexp.MustCompile(`^[A-Za-z]([-]*[A-Za-z0-9])*(\.[A-Za-z0-9]([-]*[A-Za-z0-9])*)+$`)

func check(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)

	m := interfaceLine.FindStringSubmatchIndex(text)
	if m == nil {
		return fmt.Errorf("no interface line")
	}
	name := text[m[2]:m[3]]
	if !interfaceName.MatchString(name) {
		return fmt.Errorf("invalid interface name %q", name)
	}
	if filepath.Base(path) != name+".varlink" {
		return fmt.Errorf("declares %s, so it must be named %s.varlink", name, name)
	}

	// Parsers older than that change (Debian 12 ships varlink/go 0.4.0) take lowercase interface
	// names only; the rest of the grammar is unchanged, so the parser checks all but the case.
	legacy := strings.ToLower(name)
	parsed, err := idl.New(text[:m[2]] + legacy + text[m[3]:])
	if err != nil {
		return err
	}
	if parsed.Name != legacy {
		return fmt.Errorf("parsed interface name %q, want %q", parsed.Name, legacy)
	}
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: idlcheck FILE.varlink...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		if err := check(path); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
		fmt.Printf("%s: ok\n", path)
	}
}
