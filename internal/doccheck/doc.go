// Package doccheck holds tests that keep the docs true to the code and to
// the repository:
//
//   - every identifier a comment of the module's Go files names, as a doc
//     link (an identifier in square brackets) or qualified by one of the
//     module's packages (engine.Node.SetObserver, model.Model.Cost; sim.Run
//     stands for sim.Sim.Run), must exist. A comment that names a function
//     after it was renamed or removed fails the tests;
//   - every citation stays in the repository or names a public source: no
//     Go file (comments and printed strings alike) and no Markdown file
//     cites the project's working files outside the repository, every .md
//     file a Go comment names exists in the repository (docs/, README.md, a
//     package's own directory) unless a public repository's name qualifies
//     it (NVIDIA/nccl-tests doc/PERFORMANCE.md), and every relative link of
//     a Markdown file resolves;
//   - every repository path the README or a page of docs/ names in code
//     (`cco/sdma.go`) exists, outside paragraphs that link a public
//     repository whose files they name (paths_test.go): docs/architecture.md's
//     map of the code fails the tests when a file it names moves;
//   - docs/env.md's table is the environment variables the code reads
//     (env_test.go: os.Getenv and os.LookupEnv in Go, tests included, and
//     getenv in capi/ and include/), and docs/subsets.md names every HIP
//     call and cco name emud's headers declare, and no other
//     (subsets_test.go);
//   - every link of the README and docs/ to a section (#anchor) names a
//     heading that exists (anchors_test.go);
//   - every identifier the README and docs/ name in inline code or a Go
//     block, qualified by one of the module's packages (emutest.NewJob),
//     exists (mdidents_test.go), as for Go comments above.
//
// The command blocks of the README and docs/ are checked in cmd/emud
// (TestREADMEOutputs, TestDocsOutputsCheckedOrDated, TestCLIReference),
// where the commands are.
package doccheck
