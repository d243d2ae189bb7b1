package engine

import "github.com/emud-dev/emud/issuer"

// Observer is told about a node's queue work as it happens; package trace
// implements it to record timelines. It is the issuer package's observer,
// which the ROCm backend's queues report to as well: the engine adds
// Retired for each packet it finishes.
type Observer = issuer.Observer

// SetObserver makes o the node's observer; nil detaches it. A node has one
// observer at a time.
func (n *Node) SetObserver(o Observer) { n.hook.O = o }

// Observer returns the node's observer, or nil.
func (n *Node) Observer() Observer { return n.hook.O }

// IssuerWait is the JSON detail of an actor blocked in the ring protocol.
type IssuerWait = issuer.Wait
