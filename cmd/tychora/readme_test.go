package main

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestREADMECommandTable: the README's CLI table names every command and
// subcommand, and for each exactly the flags it has (--json and --help,
// which every command takes, and hidden flags aside).
func TestREADMECommandTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "| command | what it does |")
	if start < 0 {
		t.Fatal("README.md has no CLI table")
	}
	table := text[start:]
	if end := strings.Index(table, "\n\n"); end > 0 {
		table = table[:end]
	}
	span := regexp.MustCompile("`([^`]+)`")
	flagRE := regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	subRE := regexp.MustCompile(`^[a-z]+(\\\|[a-z]+)*$`) // list, or get\|cancel\|retry
	// documented maps "cmd" or "cmd sub" to the flags its spans name.
	documented := map[string][]string{}
	for _, row := range strings.Split(table, "\n")[2:] {
		cell, _, _ := strings.Cut(strings.TrimPrefix(row, "| "), " | ")
		for _, m := range span.FindAllStringSubmatch(cell, -1) {
			words := strings.Fields(m[1])
			flags := flagRE.FindAllString(m[1], -1)
			names := []string{words[0]}
			if len(words) > 1 && subRE.MatchString(words[1]) {
				for _, sub := range strings.Split(words[1], `\|`) {
					names = append(names, words[0]+" "+sub)
				}
				names = names[1:]
			}
			for _, n := range names {
				documented[n] = append(documented[n], flags...)
			}
		}
	}
	app := newApp(&env{stdout: io.Discard, stderr: io.Discard})
	want := map[string][]string{}
	realFlags := func(fs []cli.Flag) []string {
		var out []string
		for _, f := range fs {
			if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
				continue
			}
			if n := f.Names()[0]; n != "json" && n != "help" {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	for _, c := range app.Commands {
		if c.Hidden {
			continue
		}
		if len(c.Subcommands) == 0 {
			want[c.Name] = realFlags(c.Flags)
			continue
		}
		for _, s := range c.Subcommands {
			if !s.Hidden && s.Name != "help" {
				want[c.Name+" "+s.Name] = realFlags(s.Flags)
			}
		}
	}
	for name, flags := range want {
		got, ok := documented[name]
		if !ok {
			t.Errorf("README's CLI table has no row for %q", name)
			continue
		}
		for _, f := range flags {
			if !slices.Contains(got, f) {
				t.Errorf("README's CLI table: %s lacks %s", name, f)
			}
		}
		for _, f := range got {
			if !slices.Contains(flags, f) {
				t.Errorf("README's CLI table: %s has no flag %s", name, f)
			}
		}
	}
	for name := range documented {
		if _, ok := want[name]; !ok {
			t.Errorf("README's CLI table names %q, which is no command", name)
		}
	}
}
