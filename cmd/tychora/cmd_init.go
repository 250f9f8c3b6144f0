package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	tyruntime "github.com/tychora/tychora/runtime"
)

func initCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a workspace and write tychora.json with every setting",
		UsageText: "tychora [--workspace W] init [--ingest-root DIR]... [--collection NAME]... [--json]",
		Description: "Creates the workspace directory and its tychora.json. Ingest roots bound what\n" +
			"may ever be indexed (default: the directory that holds the workspace; never / or\n" +
			"your home directory by default). Collections group sources for access control\n" +
			"(default: \"default\"). An existing workspace is left untouched.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "ingest-root", Usage: "a directory sources may come from (repeatable)"},
			&cli.StringSliceFlag{Name: "collection", Usage: "a collection name (repeatable)"},
			&cli.BoolFlag{Name: "json", Usage: "print the settings written as JSON"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			cols, err := collectionFlags(c)
			if err != nil {
				return err
			}
			dir, err := initDir(c)
			if err != nil {
				return err
			}
			cwd, _ := os.Getwd()
			var roots []string
			for _, r := range c.StringSlice("ingest-root") {
				if !filepath.IsAbs(r) {
					r = filepath.Join(cwd, r)
				}
				fi, err := os.Stat(r)
				if err != nil || !fi.IsDir() {
					return usageError("--ingest-root %s is not a directory", r)
				}
				roots = append(roots, filepath.Clean(r))
			}
			s, err := tyruntime.Init(dir, tyruntime.InitOptions{IngestRoots: roots, Collections: cols})
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(e.stdout, s)
			}
			fmt.Fprintf(e.stdout, "initialised workspace %s\n", dir)
			for _, r := range s.IngestRoots {
				fmt.Fprintf(e.stdout, "  ingest root  %s\n", r)
			}
			for _, col := range s.Collections {
				fmt.Fprintf(e.stdout, "  collection   %s\n", col)
			}
			return nil
		},
	}
}
