// Package doccheck holds a test that keeps the docs true to the code:
// every identifier a comment of the module's Go files names, as a doc link
// (an identifier in square brackets) or qualified by one of the module's
// packages (engine.Node.SetObserver, model.Model.Issue; sim.Run stands for
// sim.Sim.Run), must exist. A comment that names a function after it was
// renamed or removed fails the tests.
package doccheck
